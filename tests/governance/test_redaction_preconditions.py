"""The cheap preconditions in front of costly searches lose no match: each holds wherever the search
it guards would find something."""

from __future__ import annotations

import pytest
from detect_secrets.filters import heuristic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.guardrails.redaction import library
from governance.guardrails.redaction.catalogue import lower_ascii

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
