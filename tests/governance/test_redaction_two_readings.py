"""Ways of writing that a reader takes one way and the redaction took another, each a leak the
hidden-canary property test found (governance/guardrails/redaction/normalise.py, cuts.py):

- ``API_KEY==`` at a line's end, the value on the next line: the assignment's "=" then a
  quoted-printable soft line break, not base64 padding "==";
- a JSON ``\\n`` whose ``n`` alone is written as an escape (``\\\\156``, ``\\\\u006e``): the backslash of
  the JSON escape and an escape of ``n``, not one escape escaped again;
- a soft line break hidden twice: before a line break of the token's own, or between the blanks and
  the line break of another soft line break.
"""

from __future__ import annotations

import base64

import pytest

from governance.guardrails.redaction import redact
from governance.guardrails.redaction.normalise import normalised_views
from tests.canaries import generate_canaries
from tests.governance.test_stream_redaction import streamed

HIDDEN_NAME = next(c for c in generate_canaries(0) if c.kind == "env_api_key_invisible_in_name")
PASSWORD = HIDDEN_NAME.value
JSON_KEY = next(c for c in generate_canaries(2) if c.kind == "encrypted_pkcs8_in_json")
JSON_KEY_REDACTED = '{"name": "backup", "blob": "[REDACTED:private_key]\\n"}'


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("API_\u200bKEY", "api_key"),
        ("API_KEY", "api_key"),
        ("export DB_PASSWORD", "password"),
        ("GITHUB_TOKEN", "token"),
    ],
)
def test_a_soft_line_break_after_a_secret_keys_equals_sign_is_read_and_the_value_removed(name, kind):
    text = f"{name}==\n{PASSWORD}\nnext: line"

    whole = redact(text)

    assert whole.text == f"{name}==\n[REDACTED:{kind}]\nnext: line"
    assert HIDDEN_NAME.leaks(whole.text) == []
    for position in range(len(text) + 1):
        assert streamed([text[:position], text[position:]])[0] == whole.text, position


@pytest.mark.parametrize(
    "text",
    [
        # Base64 padding at a line's end, a line of text after it.
        "payload: " + base64.b64encode(b"a plain sentence of some length here.").decode() + "\nNext line",
        "MODE==\nvalue1234567890",  # a key that holds no secret
        "if x==\nreturn y",
    ],
)
def test_padding_or_an_ordinary_key_before_a_line_break_calls_for_no_view(text):
    assert text.split("\n")[0].endswith("==")
    assert normalised_views(text) == ()
    assert redact(text).text == text


ESCAPES_OF_N = {
    "octal": "\\156",
    "unicode": "\\u006e",
    "hex": "\\x6e",
    "css": "\\6e ",
    "long": "\\U0000006e",
}


@pytest.mark.parametrize("escape", ESCAPES_OF_N.values(), ids=ESCAPES_OF_N.keys())
@pytest.mark.parametrize("line", [1, -3, -2, -1])
def test_a_json_line_break_with_its_letter_escaped_keeps_a_key_body_whole(escape, line):
    value = JSON_KEY.value
    breaks = [index for index in range(len(value)) if value.startswith("\\n", index)]
    at = breaks[line]
    hidden = value[: at + 1] + escape + value[at + 2 :]
    text = JSON_KEY.context.replace(value, hidden)
    assert "\\\\" + escape.lstrip("\\") in text  # the JSON backslash, then the escape of "n"

    result = redact(text)

    assert result.text == JSON_KEY_REDACTED
    assert JSON_KEY.leaks(result.text) == []
    start = text.index(hidden)
    for position in (start + at, start + at + 1, start + at + 3, len(text) - 10):
        assert streamed([text[:position], text[position:]])[0] == result.text, position


def test_a_token_letter_escaped_twice_is_still_read_as_one_escape():
    """The first reading stays: in a JSON string of code ``\\\\156`` is an escape of ``n`` escaped again,
    and a token holding it is whole in the first view."""
    token = next(c for c in generate_canaries(26) if c.kind == "github_classic_pat").value
    at = next(index for index in range(4, len(token)) if token[index] in "nrt")
    written = token[:at] + "\\\\" + f"{ord(token[at]):03o}" + token[at + 1 :]
    text = f'{{"note": "Use {written} for the deploy."}}'

    assert len(normalised_views(text)) == 2
    assert redact(text).text == '{"note": "Use [REDACTED:github_token] for the deploy."}'


AWS_SPLIT = next(c for c in generate_canaries(3) if c.kind == "aws_key_split_by_line_break")
NPM_PADDED = next(
    c for c in generate_canaries(1485) if c.kind == "npm_token_quoted_printable_padded_soft_break"
)


@pytest.mark.parametrize(
    ("canary", "placeholder"),
    [(AWS_SPLIT, "aws_access_key_id"), (NPM_PADDED, "npm_token")],
    ids=["aws", "npm"],
)
def test_a_soft_line_break_before_a_tokens_own_line_break_is_read_and_streamed(canary, placeholder):
    # The canary's own line break (a key split over two lines; a padded soft line break) with one
    # more soft line break right before it: "=\n\n" and "= \t=\n\n".
    line_break = canary.value.index("\n")
    hidden = canary.value[:line_break] + "=\n" + canary.value[line_break:]
    text = "Lead:\n" + canary.context.replace(canary.value, hidden) + "\nTail."

    whole = redact(text)

    assert canary.leaks(whole.text) == []
    assert f"[REDACTED:{placeholder}]" in whole.text
    for position in range(len(text) + 1):
        assert streamed([text[:position], text[position:]])[0] == whole.text, position
    assert streamed(list(text))[0] == whole.text


@pytest.mark.parametrize(
    "text",
    [
        "ends with =\n\n  an indented line",
        "base64 " + base64.b64encode(b"plain words, nothing more.").decode() + "\n\n- a list item",
        "a total ==\n\nNext paragraph.",
    ],
)
def test_an_equals_sign_before_a_blank_line_and_no_token_is_no_soft_line_break(text):
    assert normalised_views(text) == ()
    assert redact(text).text == text
