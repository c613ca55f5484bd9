"""Redaction of a streamed text: a secret split across pieces never passes, and what is handed on is
what redacting the whole text gives (governance/guardrails/redaction/streaming.py)."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.guardrails.redaction import Finding, redact
from governance.guardrails.redaction.catalogue import (
    MAY_CROSS_MEMO_MAX_CHARS,
    _may_cross,
    _may_cross_short,
    may_cross,
)
from governance.guardrails.redaction.json_text import json_safe
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
ARMOURED = {
    "rsa_private_key",
    "ec_private_key",
    "openssh_private_key",
    "pkcs8_private_key",
    "pgp_private_key_block",
}


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


def test_a_key_quoted_printable_from_its_armour_into_its_body_streamed_is_redacted_as_in_the_whole_text():
    # The armour written in escapes opens a held block as the one written plainly does: handed on
    # before the body line arrived, it would leave that line's secret characters unread.
    for canary in [c for c in generate_canaries(0) if c.kind in ARMOURED]:
        text = (
            LEAD
            + canary.context.replace(canary.value, hide(canary.value, "quoted_printable", 0, 53, ""))
            + TAIL
        )
        assert "=2D=2D=2D=2D=2D=42=45=47=49=4E" in text

        out, _ = streamed(list(text))

        assert out == redact(text).text, canary.kind
        assert canary.leaks(out) == [], canary.kind


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


# What prose holds back: the word still arriving, or the last word and its space (single characters
# set apart may follow: a token spelt apart, "ghp_ A b"), with the single characters after it and the
# word still arriving after them.
HELD_PROSE = re.compile(r"(?:^|(?<= ))\S+(?: \S)+ \S+$|(?:^|(?<= ))\S+(?: \S)* ?$|\S*$")


def test_prose_is_held_back_by_one_word_at_most():
    rng = random.Random(5)
    words = ["context", "window", "the", "model", "answers", "tokens", "a", "governed", "service", "key"]
    text = " ".join(rng.choice(words) for _ in range(400)) + "."
    redactor = StreamRedactor()
    handed_on = []
    longest = 0
    for index in range(0, len(text), 3):  # pieces of three characters, as a model streams
        handed_on.append(redactor.feed(text[index : index + 3]))
        held = len(text[: index + 3]) - len("".join(handed_on))
        received = text[: index + 3]
        expected = HELD_PROSE.search(received)
        assert expected is not None and held == len(expected.group()), received[-30:]
        longest = max(longest, held)
    assert "".join(handed_on) + redactor.finish() == text
    assert redactor.max_held == longest


# A word that may start a key (a vendor prefix or its beginning: "do" of "dop_v1_", "Now" of a Discord
# token's first character) is held with the separator after it until the word after it rules the key
# out or completes it: the key may be split there ("AKIA12 3456..."). Other words are not held longer.
def test_prose_holds_a_word_that_may_start_a_key_only_until_the_next_word_rules_it_out():
    redactor = StreamRedactor()

    assert redactor.feed("Can you do ") == "Can you "
    assert redactor.feed("this ") == "do "  # "dothis" starts no key: "do" goes on with the next cut
    assert redactor.feed("now.") == "this "
    assert redactor.finish() == "now."


# --- a token split in two or into string literals (rule 7) -------------------------------------------


def aws_key(seed: int) -> str:
    return next(c for c in generate_canaries(seed) if c.kind == "aws_access_key_id").value


@pytest.mark.parametrize("separator", [" ", "\u00a0", "\n", "\u2028", "\u2029", "\r\n"])
def test_the_first_part_of_a_key_split_by_one_separator_is_held_until_the_second_arrives(separator):
    key = aws_key(4)
    redactor = StreamRedactor()

    first = redactor.feed(f"The key is {key[:6]}{separator}")
    second = redactor.feed(f"{key[6:]} in the vault.")
    out = first + second + redactor.finish()

    assert first == "The key is "
    assert second == "[REDACTED:aws_access_key_id] in the "
    assert out == redact(f"The key is {key[:6]}{separator}{key[6:]} in the vault.").text
    assert key[:6] not in out and key[6:] not in out


SPLIT_AND_HIDDEN = {
    # An invisible character in the first part: the two parts are joined in the normalised view.
    "invisible": lambda key: f"{key[:2]}\u200b{key[2:6]}\u00a0{key[6:]}",
    "escaped_letter": lambda key: f"\\u0041{key[1:6]} {key[6:]}",
    # Single characters after the key, which are held as a token spelt apart may be.
    "single_characters_after": lambda key: f"{key[:6]} {key[6:]} x y z",
}


@pytest.mark.parametrize("how", SPLIT_AND_HIDDEN)
def test_a_split_key_with_a_hidden_character_is_redacted_at_every_cut_as_in_the_whole_text(how):
    text = f"tok={SPLIT_AND_HIDDEN[how](aws_key(6))} end"
    whole = redact(text).text
    assert whole.count("[REDACTED:aws_access_key_id]") == 1

    for position in range(len(text) + 1):
        out, _ = streamed([text[:position], text[position:]])
        assert out == whole, position


def test_a_split_key_is_held_as_well_when_its_crossing_is_answered_from_the_memo():
    key = aws_key(4)
    prose = "The answer comes in several pieces, each word after the other."
    searched = [(run, len(run)) for run in (key[:2], key[:6], key, *prose.split())]
    searched += [(key[:6] + key[6:9], 6), ("x" * (MAY_CROSS_MEMO_MAX_CHARS + 1), 4)]
    expected = [_may_cross(text, join) for text, join in searched]
    # A key's beginning may go on across the split; a whole key or a word may not; a split key does.
    assert expected[:2] == [True, True] and not any(expected[2:-2]) and expected[-2]

    assert [may_cross(text, join) for text, join in searched] == expected
    memo = _may_cross_short.cache_info()
    assert (memo.hits, memo.misses, memo.currsize) == (0, len(searched) - 1, len(searched) - 1)
    assert [may_cross(text, join) for text, join in searched] == expected  # now from the memo
    memo = _may_cross_short.cache_info()
    assert (memo.hits, memo.misses) == (len(searched) - 1, len(searched) - 1)  # the long one: never kept

    for _ in range(2):  # the second stream's crossings come from the memo
        redactor = StreamRedactor()
        assert redactor.feed(f"The key is {key[:6]} ") == "The key is "
        assert redactor.feed(f"{key[6:]} in the vault.") == "[REDACTED:aws_access_key_id] in the "


def test_a_run_holding_a_key_of_its_own_is_not_held_for_the_run_after_it():
    key = aws_key(4)
    redactor = StreamRedactor()

    assert redactor.feed(f"keys {key} and more") == "keys [REDACTED:aws_access_key_id] and "


def test_a_chain_of_string_literals_is_held_until_it_ends():
    key = aws_key(5)
    redactor = StreamRedactor()

    first = redactor.feed(f'key_id = ("{key[:6]}" ')
    second = redactor.feed(f'"{key[6:]}")  # from the vault')
    out = first + second + redactor.finish()

    assert first == "key_id = "
    assert out == 'key_id = ("[REDACTED:aws_access_key_id]")  # from the vault'


@pytest.mark.parametrize("join", ["' + '", "' '", "'\n    '", "' . '", "' || '"])
def test_a_token_joined_from_literals_streamed_one_character_at_a_time_is_redacted_whole(join):
    token = GITHUB.value
    text = f"login('{token[:20]}{join}{token[20:]}') and go on"

    out, _ = streamed(list(text))

    assert out == redact(text).text == "login('[REDACTED:github_token]') and go on"


def test_a_quoted_word_in_prose_is_held_only_until_the_next_word_starts():
    redactor = StreamRedactor()

    assert redactor.feed('He said "hello" ') == "He said "
    assert redactor.feed("and left") == '"hello" and '


def test_a_password_word_after_a_colon_is_held_until_what_follows_it_decides():
    # "password: click the link" is prose, "password: Hunter2Lamp" at a line's end a password: the
    # word after the value decides, so the value goes on only with it.
    prose = StreamRedactor()
    assert prose.feed("Forgot your password: click ") == "Forgot your password: "
    assert prose.feed("the ") == ""  # the next cut, after "click ", would leave out "the"
    assert prose.feed("link ") == "click the "
    assert prose.feed("below.") + prose.finish() == "link below."

    secret = StreamRedactor()
    assert secret.feed("admin password: Hunter2Lamp ") == "admin password: "
    assert secret.feed("\nnext") == "[REDACTED:password] \n"
    assert secret.finish() == "next"


def test_an_occurrence_of_a_value_found_earlier_is_never_split_by_a_cut():
    # A token joined from literals is found once and then searched for as written, blanks included:
    # the cut after its inner blank would hand on its first half unredacted.
    token = GITHUB.value
    value = f"{token[:20]}' + '{token[20:]}"
    redactor = StreamRedactor()

    first = redactor.feed(f"login('{value}')\nagain: ")
    second = redactor.feed(f"{value}x")  # whole, and the blank inside it is the last one
    out = first + second + redactor.feed(" and") + redactor.finish()

    assert second == "again: "  # the token is held whole
    assert out == "login('[REDACTED:github_token]')\nagain: [REDACTED:github_token]x and"


def test_only_token_like_values_found_in_json_text_are_searched_for_again():
    # A key split into adjacent literals inside a JSON string is redacted around its escaped quotes;
    # the blank between them was then searched for as a value of its own, and every later blank went.
    key = aws_key(5)
    text = json.dumps({"cmd": f'key_id = ("{key[:6]}" "{key[6:]}")', "note": "a b c"})
    redactor = StreamRedactor(json_text=True)

    out = "".join(redactor.feed(text[i : i + 5]) for i in range(0, len(text), 5)) + redactor.finish()

    assert json.loads(out) == {
        "cmd": 'key_id = ("[REDACTED:aws_access_key_id]" "[REDACTED:aws_access_key_id]")',
        "note": "a b c",
    }


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
    assert safe_cut(held + ";Encrypt=true next") == len(held + ";Encrypt=true ")


# Found by streaming a quoted password a character at a time: when its closing quote (or a
# connection-string password's ";") arrived with nothing after it, the cut fell after the last white
# space inside the value, and its first words were handed on before the whole value was seen.
def test_a_closed_quoted_password_is_held_until_white_space_follows_its_quote():
    held = 'db:\n  password: "two words here"'
    assert safe_cut(held) == held.index('"')
    assert safe_cut(held + " next") == len(held) + 1


def test_a_connection_string_password_is_held_until_white_space_follows_its_semicolon():
    held = "Server=db;Password=with space;Encrypt=true"
    assert safe_cut(held) == held.index("=with") + 1
    assert safe_cut(held + " next") == len(held) + 1


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


# --- the hold limit (issue: at MAX_HOLD_CHARS the held tail went out unredacted) ------------------------

GITHUB = next(c for c in CANARIES if c.kind == "github_classic_pat")
AWS_KEY_ID = next(c for c in CANARIES if c.kind == "aws_access_key_id")


def minified(size: int) -> str:
    """A JSON document without white space, longer than ``size`` characters, open for one more key."""
    items = ",".join(f'"item-{n:05d}"' for n in range(size // 12 + 1))
    return '{"items":[' + items + '],"token":"'


def test_a_run_longer_than_the_hold_limit_is_handed_on_with_its_last_token_replaced():
    run = "ab" * (MAX_HOLD_CHARS // 2 + 1)
    redactor = StreamRedactor()
    assert redactor.feed(run) == "[REDACTED:possible_secret]"
    assert redactor.feed("cd efg") == " "  # the rest of the run is dropped; the next word is held
    assert redactor.finish() == "efg"
    assert redactor.counts_by_kind() == {"possible_secret": 1}


@pytest.mark.parametrize("at", [1, 7, 20, 33, 39])
def test_a_token_cut_by_the_hold_limit_never_comes_out_in_part(at):
    head = minified(MAX_HOLD_CHARS)
    token = GITHUB.value
    redactor = StreamRedactor()

    first = redactor.feed(head + token[:at])
    second = redactor.feed(token[at:] + '"} done')
    out = first + second + redactor.finish()

    assert first == head.removesuffix('"token":"') + '"token":"[REDACTED:possible_secret]'
    assert out == head + '[REDACTED:possible_secret]"} done'
    assert GITHUB.leaks(out) == []


@pytest.mark.parametrize("at", [1, 4, 12, 19])
def test_minified_tool_call_arguments_cut_by_the_hold_limit_stay_valid_json_without_the_key(at):
    head = minified(MAX_HOLD_CHARS)
    key = AWS_KEY_ID.value
    redactor = StreamRedactor(json_text=True)

    out = redactor.feed(head + key[:at]) + redactor.feed(key[at:] + '","env":"prod"}') + redactor.finish()

    assert AWS_KEY_ID.leaks(out) == []
    assert json.loads(out)["token"] == "[REDACTED:possible_secret]"
    assert json.loads(out)["env"] == "prod"


def test_an_escape_arriving_at_the_hold_limit_stays_whole():
    head = minified(MAX_HOLD_CHARS)
    redactor = StreamRedactor(json_text=True)

    out = redactor.feed(head + "abc\\") + redactor.feed('"quoted\\" rest"}') + redactor.finish()

    assert json.loads(out)["token"] == '[REDACTED:possible_secret]"quoted" rest'


# --- JSON text (issue: the placeholder took an escaped quote, and the arguments no longer parsed) -----


def command_arguments(value: str) -> str:
    return json.dumps({"cmd": f'export TOKEN="{value}"'}, separators=(",", ":"))


def test_a_token_between_escaped_quotes_streamed_in_json_keeps_its_quotes_at_every_split():
    text = command_arguments(GITHUB.value)
    expected = command_arguments("[REDACTED:github_token]")
    for position in range(len(text) + 1):
        redactor = StreamRedactor(json_text=True)
        out = redactor.feed(text[:position]) + redactor.feed(text[position:]) + redactor.finish()
        assert out == expected, position
        assert json.loads(out) == {"cmd": 'export TOKEN="[REDACTED:github_token]"'}


@pytest.mark.parametrize("kind", [c.kind for c in CANARIES if "\n" not in c.context])
def test_every_canary_in_a_json_string_streamed_stays_valid_json(kind):
    canary = next(c for c in CANARIES if c.kind == kind)
    text = json.dumps({"cmd": canary.context, "quoted": f'say "{canary.value}"', "n": 3})
    redactor = StreamRedactor(json_text=True)

    out = "".join(redactor.feed(text[i : i + 7]) for i in range(0, len(text), 7)) + redactor.finish()

    decoded = json.loads(out)
    assert canary.leaks(out) == [] and canary.leaks(decoded["cmd"] + decoded["quoted"]) == []
    assert decoded["n"] == 3
    assert decoded["quoted"].startswith('say "') and decoded["quoted"].endswith('"')


def test_json_safe_takes_escapes_whole_and_never_an_escaped_quote_or_a_delimiter():
    text = '{"a":"x\\"SECRET\\u0041\\"","b":7}'
    start, end = text.index('\\"SECRET'), text.index('","b"') + 1  # from the escape to past the quote

    reshaped = json_safe(text, [Finding("secret", start + 1, end)], in_string=False)

    assert [text[f.start : f.end] for f in reshaped] == ["SECRET\\u0041"]
    assert json_safe(text, [Finding("secret", text.index("7"), len(text))], in_string=False) == []
