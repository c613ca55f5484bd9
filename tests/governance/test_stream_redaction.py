"""Redaction of a streamed text: a secret split across pieces never passes, and what is handed on is
what redacting the whole text gives (governance/guardrails/redaction/streaming.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.guardrails.redaction import redact
from governance.guardrails.redaction.streaming import MAX_HOLD_CHARS, StreamRedactor, safe_cut
from tests.canaries import Canary, generate_canaries, generate_negatives
from tests.governance.test_redaction import hide

CANARIES = generate_canaries(3)
LEAD = "Here is what I found in the file:\n"
TAIL = "\nThat is all; rotate it soon."
EDGE = 24  # split positions tried one by one at each end of a long secret


def streamed(pieces: list[str]) -> tuple[str, StreamRedactor]:
    redactor = StreamRedactor()
    handed_on = [redactor.feed(piece) for piece in pieces]
    return "".join(handed_on) + redactor.finish(), redactor


def split_positions(text: str, canary: Canary) -> list[int]:
    """Every position inside the canary's value; for a long value (a key block) every position within
    EDGE characters of its ends and every 31st in between."""
    start = text.index(canary.value)
    end = start + len(canary.value)
    if end - start <= 2 * EDGE:
        return list(range(start, end + 1))
    middle = range(start + EDGE, end - EDGE, 31)
    return [*range(start, start + EDGE), *middle, *range(end - EDGE, end + 1)]


def test_a_secret_split_in_two_at_every_position_is_redacted_as_in_the_whole_text():
    for canary in CANARIES:
        text = LEAD + canary.context + TAIL
        whole = redact(text).text
        for position in split_positions(text, canary):
            out, _ = streamed([text[:position], text[position:]])
            assert out == whole, (canary.kind, position)
            assert canary.leaks(out) == [], (canary.kind, position)


def test_a_secret_streamed_one_character_at_a_time_is_redacted_as_in_the_whole_text():
    for canary in CANARIES:
        text = LEAD + canary.context + TAIL
        out, redactor = streamed(list(text))
        assert out == redact(text).text, canary.kind
        assert redactor.counts_by_kind() == redact(text).counts_by_kind(), canary.kind


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chosen=st.lists(st.sampled_from(range(len(CANARIES))), min_size=1, max_size=3),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
)
def test_secrets_cut_into_random_pieces_come_out_as_the_whole_text_redacted(chosen, cuts):
    text = LEAD + "\n\nAnd next: ".join(CANARIES[index].context for index in chosen) + TAIL
    positions = sorted({cut % (len(text) + 1) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *positions], [*positions, len(text)], strict=True)]
    out, _ = streamed(pieces)
    assert out == redact(text).text
    for index in chosen:
        assert CANARIES[index].leaks(out) == []


KEY_BODIES = {
    "rsa_key_body_without_armour",
    "openssh_key_body_without_armour",
    "random_key_body_without_armour",
    "pkcs8_private_key",  # armoured: a hidden character may fall in the armour
}
EC_IN_YAML = next(c for c in generate_canaries(1) if c.kind == "ec_key_in_yaml_block")


@pytest.mark.parametrize(
    "how", ["invisible", "percent", "unicode_escape", "hex_escape", "html_reference", "fullwidth"]
)
def test_a_key_with_a_hidden_character_streamed_is_redacted_as_in_the_whole_text(how):
    # Found by streaming hidden canaries: a key body line holding a hidden character (or ending in an
    # escape still arriving) did not look like base64, so the lines before it were handed on alone;
    # an armour with a hidden character did not open a block, so its lines were handed on apart.
    rng = random.Random(11)
    for canary in [c for c in generate_canaries(0) if c.kind in KEY_BODIES] + [EC_IN_YAML]:
        # Inside the opening and closing armour of an armoured key, and three places at random.
        for at in [2, len(canary.value) - 3, *(rng.randrange(len(canary.value)) for _ in range(3))]:
            hidden = canary.context.replace(canary.value, hide(canary.value, how, at, 0, "\u2060"))
            text = LEAD + hidden + TAIL
            out, _ = streamed(list(text))
            assert out == redact(text).text, (canary.kind, how, at)
            assert canary.leaks(out) == [], (canary.kind, how, at)


def test_a_key_line_ended_by_an_escaped_line_break_is_held_with_the_lines_after_it():
    # The escaped line break ends the block's first line inside a line as written: the block starts
    # there, although no full line stands before it.
    value = EC_IN_YAML.value
    at = value.index("\n") - 3
    text = LEAD + EC_IN_YAML.context.replace(value, hide(value, "unicode_escape", at, 3, "")) + TAIL
    assert "\\u000a    " in text

    out, _ = streamed(list(text))

    assert out == redact(text).text
    assert EC_IN_YAML.leaks(out) == []


def test_texts_without_secrets_pass_through_unchanged_word_by_word():
    for negative in generate_negatives():
        text = LEAD + negative.text + TAIL
        words = text.split(" ")
        out, _ = streamed([word + " " for word in words[:-1]] + words[-1:])
        assert out == text, negative.name


def test_prose_is_held_back_by_one_word_at_most():
    rng = random.Random(5)
    words = ["context", "window", "the", "model", "answers", "tokens", "a", "governed", "service", "key"]
    text = " ".join(rng.choice(words) for _ in range(400)) + "."
    redactor = StreamRedactor()
    handed_on = []
    for index in range(0, len(text), 3):  # pieces of three characters, as a model streams
        handed_on.append(redactor.feed(text[index : index + 3]))
        held = len(text[: index + 3]) - len("".join(handed_on))
        received = text[: index + 3]
        assert held == len(received) - (received.rfind(" ") + 1 if " " in received else 0)
    assert "".join(handed_on) + redactor.finish() == text
    assert redactor.max_held == max(len(word) for word in words)


def test_a_bare_value_seen_before_its_assignment_is_only_redacted_from_the_assignment_on():
    # The one difference from redacting the whole text: what was handed on cannot be taken back.
    rng = random.Random(9)
    value = "".join(rng.choice("abcdefghijkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(24))
    text = f"first {value} then\npassword = {value}\nand again {value} here"
    out, _ = streamed([text[: text.index("\n") + 1], text[text.index("\n") + 1 :]])
    assert out == f"first {value} then\npassword = [REDACTED:password]\nand again [REDACTED:password] here"
    assert redact(text).text.count(value) == 0


def test_an_open_quoted_password_is_held_until_its_quote_closes():
    held = 'db:\n  password: "two words'
    assert safe_cut(held) == held.index('"')
    assert safe_cut(held + ' and more"\n') == len(held + ' and more"\n')


def test_an_open_connection_string_password_is_held_until_its_semicolon():
    held = "Server=db;User Id=app;Password=with space"
    assert safe_cut(held) == held.index("=with") + 1
    assert safe_cut(held + ";Encrypt=true ") == len(held + ";Encrypt=true ")


# Found by streaming a quoted password a character at a time: when its closing quote (or a
# connection-string password's ";") arrived with nothing after it, the cut fell after the last white
# space inside the value, and its first words were handed on before the whole value was seen.
def test_a_closed_quoted_password_is_held_until_white_space_follows_its_quote():
    held = 'db:\n  password: "two words here"'
    assert safe_cut(held) == held.index('"')
    assert safe_cut(held + " ") == len(held) + 1


def test_a_connection_string_password_is_held_until_white_space_follows_its_semicolon():
    held = "Server=db;Password=with space;Encrypt=true"
    assert safe_cut(held) == held.index("=with") + 1
    assert safe_cut(held + " ") == len(held) + 1


@pytest.mark.parametrize("quote", ['"', "'", "&quot;", "&#34;", "&#x22;"])
def test_a_quoted_password_streamed_one_character_at_a_time_is_redacted_whole(quote):
    text = f"config: password={quote}two words here{quote} end\n"

    out, _ = streamed(list(text))

    assert out == redact(text).text == f"config: password={quote}[REDACTED:password]{quote} end\n"


def test_an_unclosed_key_block_is_held_from_its_armour():
    opening = "-----" + "BEGIN RSA PRIVATE KEY" + "-----"
    held = f"key:\n{opening}\nMIIEowIBAAKCAQEA\nabc "
    assert safe_cut(held) == held.index(opening)
    assert safe_cut("rule:\n----- BEG") == len("rule:\n")


def test_a_run_longer_than_the_hold_limit_is_released_redacted():
    run = "ab" * (MAX_HOLD_CHARS // 2 + 1)
    redactor = StreamRedactor()
    assert redactor.feed(run) == redact(run).text
    assert redactor.finish() == ""
