"""An octal escape followed by a digit or a hex letter is also the CSS escape of a character that
hides (``\\0602``: ``0`` then ``2``, or U+0602): both readings are searched, so a token written with
one is removed whole, streamed too (governance/guardrails/redaction/escapes.py, normalise.py)."""

from __future__ import annotations

import pytest

from governance.guardrails.redaction import Finding, redact
from governance.guardrails.redaction.normalise import normalised_views
from tests.canaries import generate_canaries
from tests.governance.test_stream_redaction import streamed

ADJACENT = next(c for c in generate_canaries(2) if c.kind == "aws_key_adjacent_string_literals")
AWS_REDACTED = 'key_id = ("[REDACTED:aws_access_key_id]")  # from the vault'
KEY = next(c for c in generate_canaries(0) if c.kind == "aws_access_key_id").value

# Characters whose octal escape, followed by the next character, is the CSS escape of an invisible one.
TWINS = {
    "U+0602": ("0", "2"),
    "U+061C": ("1", "C"),
    "U+070F": ("8", "F"),
    "U+115F": ("M", "F"),
    "U+1160": ("N", "0"),
}


def octal(char: str) -> str:
    return f"\\{ord(char):03o}"


def adjacent_with_an_escaped_zero() -> str:
    """The adjacent-literals canary with the ``0`` before its ``2`` written as an octal escape."""
    zero = ADJACENT.value.index("02")
    hidden = ADJACENT.value[:zero] + octal("0") + ADJACENT.value[zero + 1 :]
    return ADJACENT.context.replace(ADJACENT.value, hidden)


def key_with(char: str, following: str) -> tuple[str, str]:
    """An AWS key id holding ``char`` then ``following``, and the same key with ``char`` written as
    an octal escape."""
    key = KEY[:8] + char + following + KEY[10:]
    return key, KEY[:8] + octal(char) + following + KEY[10:]


def test_a_key_in_adjacent_literals_with_an_octal_escape_before_a_digit_is_removed_whole():
    # The case the property test found (seed=2, index=65, how="octal_escape", at=16, length=0).
    text = adjacent_with_an_escaped_zero()
    assert "\\0602" in text

    result = redact(text)

    assert result.text == AWS_REDACTED
    assert result.findings == (
        Finding(kind="aws_access_key_id", start=text.index("AKIA"), end=text.index('")')),
    )
    assert ADJACENT.leaks(result.text) == []


@pytest.mark.parametrize(("char", "following"), TWINS.values(), ids=TWINS.keys())
def test_a_key_with_an_octal_escape_that_is_also_a_css_escape_of_an_invisible_is_removed_whole(
    char, following
):
    key, written = key_with(char, following)
    text = f"use {written} for the backup"

    result = redact(text)

    assert result.text == "use [REDACTED:aws_access_key_id] for the backup"
    assert result.findings == (Finding(kind="aws_access_key_id", start=4, end=4 + len(written)),)
    assert key[4:] not in result.text


def test_only_an_escape_that_reads_two_ways_gets_a_view_for_each_reading():
    key, written = key_with("0", "2")

    views = normalised_views(f"use {written} now")

    # As CSS, U+0602 is invisible and dropped; as octal, it is a "0" and the "2" after it is as written.
    assert [view.text for view in views] == [f"use {KEY[:8]}{KEY[10:]} now", f"use {key} now"]
    assert views[1].original_span(4, 4 + len(key)) == (4, 4 + len(written))
    # \111 then "A": the CSS escape U+111A hides nothing, so the octal reading is the only one.
    assert [view.text for view in normalised_views("x\\101\\113\\111AY0z")] == ["xAKIAY0z"]


def test_a_key_in_adjacent_literals_with_an_octal_escape_before_a_digit_streamed_is_redacted_whole():
    text = "Here it is:\n" + adjacent_with_an_escaped_zero() + "\nrotate it soon."
    whole = redact(text).text
    assert whole == f"Here it is:\n{AWS_REDACTED}\nrotate it soon."

    for position in range(len(text) + 1):
        assert streamed([text[:position], text[position:]])[0] == whole, position
    assert streamed(list(text))[0] == whole


@pytest.mark.parametrize(("char", "following"), TWINS.values(), ids=TWINS.keys())
def test_a_key_with_an_octal_escape_that_reads_two_ways_streamed_is_redacted_whole(char, following):
    _, written = key_with(char, following)
    text = f"Use {written} for the backup.\nThen rotate it."

    assert streamed(list(text))[0] == "Use [REDACTED:aws_access_key_id] for the backup.\nThen rotate it."
