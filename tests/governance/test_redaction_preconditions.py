"""The cheap preconditions in front of costly searches lose no match: each holds wherever the search
it guards would find something."""

from __future__ import annotations

import string

import pytest
from detect_secrets.filters import heuristic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.guardrails.redaction import library
from governance.guardrails.redaction.catalogue import lower_ascii
from governance.guardrails.redaction.spelled import joined_spans, open_pair
from tests.canaries import generate_canaries

_GUARDED = [
    (type(plugin).__name__, plugin, pattern)
    for plugin in library._TOKEN_PLUGINS + library._KEYWORD_PLUGINS
    if type(plugin) in library._PLUGIN_TRIGGERS
    for pattern in plugin.denylist
]


def test_every_token_plugin_has_a_precondition():
    assert [
        type(plugin) for plugin in library._TOKEN_PLUGINS if type(plugin) not in library._PLUGIN_TRIGGERS
    ] == []


@pytest.mark.parametrize(("name", "plugin", "pattern"), _GUARDED, ids=[name for name, _, _ in _GUARDED])
def test_a_line_the_plugin_reports_on_meets_its_precondition(name, plugin, pattern):
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        before=st.text(max_size=8), match=st.from_regex(pattern, fullmatch=True), after=st.text(max_size=8)
    )
    def check(before, match, after):
        line = f"{before}{match}{after}"
        if list(plugin.analyze_string(line)):
            assert library._PLUGIN_TRIGGERS[type(plugin)].search(lower_ascii(line)) is not None, name

    check()


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="ab =!:([)]\t\x0b.-_9x\n", max_size=60) | st.text(max_size=60))
def test_the_indirect_reference_check_is_detect_secrets_own(line):
    assert library._is_indirect_reference(line) == heuristic.is_indirect_reference(line)


def test_the_indirect_reference_check_skips_long_lines_as_detect_secrets_does():
    line = "token = get_secret(" + "x" * 1000 + ")"
    assert heuristic.is_indirect_reference(line) is False
    assert library._is_indirect_reference(line) is False
    assert library._is_indirect_reference("token = get_secret()") is True


# A stream holds the first run of a pair while the second arrives only when a shape may still cross the
# split (``spelled.open_pair``, partial matching): wherever the whole text joins the pair, each
# beginning of the second run kept the first one held.
_SPLIT_CHARS = set(string.ascii_letters + string.digits + "_+/=.-")
_JOINABLE = [
    canary.value
    for seed in (0, 1)
    for canary in generate_canaries(seed)
    if set(canary.value) <= _SPLIT_CHARS and len(canary.value) >= 15
]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    index=st.integers(min_value=0, max_value=len(_JOINABLE) - 1),
    at=st.integers(min_value=1, max_value=4096),
    separator=st.sampled_from([" ", "\n", "\t", "\u00a0", "\u2028", "\u2029", "\r\n"]),
    before=st.sampled_from(["", "key ", "value: ", "x\n"]),
)
def test_a_pair_the_whole_text_joins_was_held_at_every_beginning_of_its_second_part(
    index, at, separator, before
):
    value = _JOINABLE[index]
    at = 1 + at % (len(value) - 1)
    text = f"{before}{value[:at]}{separator}{value[at:]}"
    if not joined_spans(text):
        return  # the whole text does not join this pair (its first part is a shape of its own)
    first = len(before)
    for arrived in range(len(before) + at + len(separator), len(text) + 1):
        assert open_pair(text[:arrived]) == first, (value, at, arrived)


def test_a_word_that_starts_no_key_is_not_held_for_the_next_one():
    assert [open_pair(text) for text in ("the ", "the c", "window\n", "2024 x", "AKIA ")] == [4, 5, 7, 6, 0]
