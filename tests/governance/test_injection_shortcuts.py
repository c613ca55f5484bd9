"""The injection scanner's shortcuts change how much work a scan does, never what it finds
(governance/guardrails/injection_rules.py): the anchor words, the character a rule requires and the
words its matches begin with. Texts are drawn from the words the rules read, the characters around
them (blanks, punctuation, markup, line breaks), upper case, characters NFKC folds and letters
IGNORECASE reads as ASCII; each is scanned with every pattern run over the whole text, and with the
shortcuts. ``injection_rules`` names exactly the rules the full scan finds."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.guardrails import injection
from governance.guardrails.injection import injection_rules, scan_for_injection
from tests.governance.test_injection import BENIGN_TOOL_DESCRIPTIONS, CONTENT_POSITIVES, NEGATIVES, POSITIVES

TOOLS = ("notify_editors", "send_money", "fetch.page")
WORDS = sorted(
    {word for rule in injection._RULES for word in (*rule.anchors, *rule.starts)}
    | {
        "the",
        "a",
        "all",
        "previous",
        "instructions",
        "system",
        "prompt",
        "with",
        "to",
        "you",
        "are",
        "no",
        "longer",
    }
    | {"mode", "now", "as", "answering", "reply", "tool", "function", "message", "note", "assistant", "full"}
    | {"https://x.example.net/a?b=1", "make", "clean", "GPT-4", "dan", "DAN", "do", "anything", *TOOLS}
)
FLAGGED = [text for text, _ in POSITIVES + CONTENT_POSITIVES]
GLUE = [
    " ",
    " ",
    " ",
    "\n",
    ", ",
    ". ",
    ": ",
    "#",
    "### ",
    "<",
    ">",
    "|",
    "_",
    "-",
    "(",
    ")",
    "«",
    "»",
    "'",
    '"',
]
ODD = ["\u0131", "\u0130", "\uff49gnore", "\u017f", "\u212a", "\u200b", "é", "ﬁ"]


def piece() -> st.SearchStrategy[str]:
    word = st.sampled_from(WORDS)
    cased = st.one_of(word, word.map(str.upper), word.map(str.title))
    return st.one_of(cased, cased, cased, st.sampled_from(GLUE), st.sampled_from(GLUE), st.sampled_from(ODD))


@st.composite
def mutated_example(draw: st.DrawFn) -> str:
    """A flagged example with one word swapped for another the rules read (``call`` for ``use``...),
    so each alternative a pattern begins with is tried in a sentence shaped like a match."""
    words = draw(st.sampled_from(FLAGGED)).split(" ")
    words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(WORDS))
    text = " ".join(words)
    return draw(st.sampled_from([text, text.upper(), text.lower()]))


TEXTS = st.lists(st.one_of(piece(), mutated_example()), min_size=1, max_size=30).map("".join)


def unshortened(text: str, **kwargs) -> tuple:
    rules = injection._RULES
    injection._RULES = injection._RULES_WITHOUT_ANCHORS
    try:
        return scan_for_injection(text, **kwargs)
    finally:
        injection._RULES = rules


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_the_shortcuts_find_what_every_pattern_finds(text):
    full = unshortened(text, tool_names=TOOLS)

    assert scan_for_injection(text, tool_names=TOOLS) == full
    assert injection_rules(text, tool_names=TOOLS) == tuple(sorted({finding.rule for finding in full}))


EXAMPLES = [text for text, _ in POSITIVES + CONTENT_POSITIVES] + NEGATIVES + BENIGN_TOOL_DESCRIPTIONS


@pytest.mark.parametrize("text", EXAMPLES + [text.upper() for text in EXAMPLES])
def test_injection_rules_names_what_the_scan_finds_in_every_example(text):
    found = scan_for_injection(text, tool_names=TOOLS)

    assert injection_rules(text, tool_names=TOOLS) == tuple(sorted({finding.rule for finding in found}))
    assert found == unshortened(text, tool_names=TOOLS)


def test_a_flagged_example_is_found_with_few_rules_tried():
    """The point of the shortcuts: a clean text runs no pattern over its whole length."""
    text = "Opening hours: 9 to 5 on weekdays, 10 to 2 on Saturdays. " * 5
    lowered = injection._lowered(text)

    assert list(injection._runnable(injection._RULES, injection._tool_rules(TOOLS), lowered)) == []
    assert injection_rules(text, tool_names=TOOLS) == ()
