"""A token split into string literals whose quotes, or the join between them, are written escaped or
fullwidth is joined again and removed whole, streamed too (governance/guardrails/redaction/literals.py)."""

from __future__ import annotations

import pytest

from governance.guardrails.redaction import redact
from tests.canaries import generate_canaries
from tests.governance.test_stream_redaction import streamed

CONCATENATED = next(c for c in generate_canaries(0) if c.kind == "github_token_string_concatenation")
ADJACENT = next(c for c in generate_canaries(0) if c.kind == "aws_key_adjacent_string_literals")
GITHUB_REDACTED = "gh_login('[REDACTED:github_token]')"
AWS_REDACTED = 'key_id = ("[REDACTED:aws_access_key_id]")  # from the vault'

# How a quote is written where a reader (or a model) still reads a quote.
ESCAPED_APOSTROPHES = {
    "percent": "%27",
    "percent_twice": "%2527",
    "hex_escape": "\\x27",
    "unicode_escape": "\\u0027",
    "octal_escape": "\\047",
    "fullwidth": "\uff07",
}


def concatenated(closing: str = "'", join: str = " + ", opening: str = "'") -> str:
    """The concatenation canary's context with its inner quotes and join written as given."""
    first, second = CONCATENATED.value.split("' + '")
    return CONCATENATED.context.replace(CONCATENATED.value, f"{first}{closing}{join}{opening}{second}")


def test_a_token_concatenated_with_its_closing_quote_percent_escaped_is_removed_whole():
    # The case the property test found (seed=0, index=66, how="percent", at=65, length=0).
    text = concatenated(closing="%27")
    assert text == CONCATENATED.context.replace("1' + 'r", "1%27 + 'r")

    result = redact(text)

    assert result.text == GITHUB_REDACTED
    assert [(finding.kind, finding.start, finding.end) for finding in result.findings] == [
        ("github_token", text.index("ghs_"), text.rindex("'"))
    ]
    assert CONCATENATED.leaks(result.text) == []


@pytest.mark.parametrize("quote", ESCAPED_APOSTROPHES.values(), ids=ESCAPED_APOSTROPHES.keys())
@pytest.mark.parametrize("side", ["closing", "opening"])
def test_a_token_concatenated_with_an_escaped_quote_is_removed_whole(quote, side):
    text = concatenated(closing=quote) if side == "closing" else concatenated(opening=quote)

    assert redact(text).text == GITHUB_REDACTED


@pytest.mark.parametrize("join", ["%20+ ", " +%20", "%20%26 "])
def test_a_token_concatenated_with_its_join_percent_escaped_is_removed_whole(join):
    assert redact(concatenated(join=join)).text == GITHUB_REDACTED


@pytest.mark.parametrize(
    "split", ["%22%20%22", '%22 "', '" %22', "\\u0022 \\u0022", "\\x22 \\x22", '\uff02 "']
)
def test_a_key_in_adjacent_literals_with_an_escaped_quote_is_removed_whole(split):
    text = ADJACENT.context.replace(ADJACENT.value, ADJACENT.value.replace('" "', split))

    assert redact(text).text == AWS_REDACTED


@pytest.mark.parametrize("side", ["closing", "opening"])
@pytest.mark.parametrize("quote", ["%27", "\\x27", "\uff07"])
def test_a_token_concatenated_with_an_escaped_quote_streamed_is_redacted_as_in_the_whole_text(quote, side):
    text = "Here it is:\n" + (concatenated(**{side: quote})) + "\nrotate it soon."
    whole = redact(text).text
    assert whole == f"Here it is:\n{GITHUB_REDACTED}\nrotate it soon."

    for position in range(len(text) + 1):
        assert streamed([text[:position], text[position:]])[0] == whole, position
    assert streamed(list(text))[0] == whole


# A quoted-printable soft line break ("=" at a line's end) inside the join: a decoder joins the lines.
SOFT_BREAK_JOINS = {"after_the_quote": ("'", "=\n + "), "after_the_operator": ("'", " +=\n ")}


@pytest.mark.parametrize("closing, join", SOFT_BREAK_JOINS.values(), ids=SOFT_BREAK_JOINS.keys())
def test_a_token_concatenated_across_a_soft_line_break_is_redacted_whole_and_streamed(closing, join):
    text = "Here it is:\n" + concatenated(closing=closing, join=join) + "\nrotate it soon."

    whole = redact(text).text

    assert whole == f"Here it is:\n{GITHUB_REDACTED}\nrotate it soon."
    for position in range(len(text) + 1):
        assert streamed([text[:position], text[position:]])[0] == whole, position


def test_a_key_in_adjacent_literals_across_a_soft_line_break_is_removed_whole():
    text = ADJACENT.context.replace(ADJACENT.value, ADJACENT.value.replace('" "', '"=\n "'))

    assert redact(text).text == AWS_REDACTED


ESCAPES = {"octal": "\\{:03o}", "hex": "\\x{:02x}", "unicode": "\\u{:04x}"}


@pytest.mark.parametrize("escape", ESCAPES.values(), ids=ESCAPES.keys())
def test_a_key_in_adjacent_literals_with_an_escape_in_the_second_streamed_is_redacted_whole(escape):
    # Cut inside the escape (after "\1", "\x4", "\u00"), the open literal still continues the chain.
    second = ADJACENT.value.index('" "') + 3
    hidden = (
        ADJACENT.value[:second] + escape.format(ord(ADJACENT.value[second])) + ADJACENT.value[second + 1 :]
    )
    text = "Here it is:\n" + ADJACENT.context.replace(ADJACENT.value, hidden) + "\nrotate it soon."
    whole = redact(text).text
    assert whole == f"Here it is:\n{AWS_REDACTED}\nrotate it soon."

    for position in range(len(text) + 1):
        assert streamed([text[:position], text[position:]])[0] == whole, position
