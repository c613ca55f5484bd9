"""The publish page's word diff (config.admin_history.word_diff): only the words that differ are marked,
and each side, read in full, is exactly its text."""

from __future__ import annotations

from config.admin_history import Span, word_diff


def joined(spans: tuple[Span, ...]) -> str:
    return "".join(span.text for span in spans)


def test_only_the_changed_words_of_a_long_paragraph_are_marked():
    old = "Write warmly and briefly. Sign every issue with the team's name and a link to the archive."
    new = "Write warmly, briefly and concretely. Sign every issue with the team's name and a link to the archive."

    diff = word_diff(old, new)

    assert (joined(diff.old), joined(diff.new)) == (old, new)
    assert [span.text for span in diff.old if span.changed] == ["briefly"]
    assert [span.text for span in diff.new if span.changed] == [", briefly", "concretely"]
    assert diff.old[-1] == Span(". Sign every issue with the team's name and a link to the archive.", False)
    assert diff.counts == (1, 2)


def test_a_new_line_is_a_change_of_its_own():
    diff = word_diff("One line.", "One\nline.")
    assert [(span.text, span.changed) for span in diff.new] == [
        ("One", False),
        ("\n", True),
        ("line.", False),
    ]
    assert diff.counts == (0, 0)  # no word changed, only the space between


def test_equal_texts_have_nothing_marked_and_empty_sides_stay_empty():
    assert word_diff("Same text.", "Same text.").old == (Span("Same text.", False),)
    diff = word_diff("", "New.")
    assert (diff.old, diff.new) == ((), (Span("New.", True),))
