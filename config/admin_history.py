"""Readable diffs: of versions on django-simple-history's history pages (snippets and skills), and of
a draft against live on the publish page.

Each version on the history page gets a unified diff of its text field against the previous version;
the publish page shows both texts side by side with the changed words marked (:func:`word_diff`).
Both are computed with :mod:`difflib` and rendered escaped: the text is editor- or upstream-authored
and must never render as HTML.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString


def unified_diff(old: str, new: str, *, old_label: str, new_label: str) -> list[str]:
    """The unified diff lines of ``old`` → ``new`` (no trailing newlines); empty when equal."""
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm=""
        )
    ]


# A word and the space after it are separate tokens, so a changed word never marks its neighbours and
# a change of spacing alone (a new line, a double space) shows where it is.
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]+")
_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class Span:
    text: str
    changed: bool  # deleted (on the old side) or inserted (on the new side)


@dataclass(frozen=True)
class WordDiff:
    """Both sides of a change as spans: every character of ``old`` in ``old`` and of ``new`` in ``new``,
    in order, with the words that differ marked changed."""

    old: tuple[Span, ...]
    new: tuple[Span, ...]

    @property
    def counts(self) -> tuple[int, int]:
        """Words removed and words added (punctuation and whitespace not counted)."""

        def words(spans: tuple[Span, ...]) -> int:
            return sum(len(_WORDS.findall(span.text)) for span in spans if span.changed)

        return words(self.old), words(self.new)


def word_diff(old: str, new: str) -> WordDiff:
    """``old`` → ``new`` word by word (:class:`difflib.SequenceMatcher` over words, spaces and
    punctuation runs), neighbouring spans of the same kind merged."""
    before, after = _TOKENS.findall(old), _TOKENS.findall(new)
    old_spans: list[Span] = []
    new_spans: list[Span] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        changed = tag != "equal"
        _append(old_spans, "".join(before[i1:i2]), changed)
        _append(new_spans, "".join(after[j1:j2]), changed)
    return WordDiff(tuple(old_spans), tuple(new_spans))


def _append(spans: list[Span], text: str, changed: bool) -> None:
    """Add ``text`` after ``spans``; the spaces around a changed run are not marked (the words are)."""
    if changed and text.strip():
        core = text.strip()
        start = text.index(core)
        _append(spans, text[:start], False)
        _append_span(spans, core, True)
        _append(spans, text[start + len(core) :], False)
        return
    _append_span(spans, text, changed)


def _append_span(spans: list[Span], text: str, changed: bool) -> None:
    if not text:
        return
    if spans and spans[-1].changed == changed:
        spans[-1] = Span(spans[-1].text + text, changed)
    else:
        spans.append(Span(text, changed))


def _line_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "diff-file"
    if line.startswith("@@"):
        return "diff-hunk"
    return {"+": "diff-add", "-": "diff-del"}.get(line[:1], "diff-context")


def render_diff(lines: list[str]) -> SafeString:
    """Lines in a collapsible block, each line escaped; ``+``/``-`` counts in the summary."""
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    styles = {
        "diff-add": "background:#e6ffed",
        "diff-del": "background:#ffeef0",
        "diff-hunk": "color:#6f42c1",
        "diff-file": "color:#666",
        "diff-context": "",
    }
    body = format_html_join(
        "\n",
        '<span class="{}" style="{}">{}</span>',
        ((_line_class(x), styles[_line_class(x)], x) for x in lines),
    )
    return format_html(
        '<details class="version-diff"><summary>+{} -{} lines</summary>'
        '<pre style="white-space: pre-wrap; max-width: 60em">{}</pre></details>',
        added,
        removed,
        body,
    )


class VersionDiffMixin:
    """For a ``SimpleHistoryAdmin``: set ``diff_field`` and list ``"diff"`` in
    ``history_list_display`` to show each version's diff against the one before it."""

    diff_field = "text"

    def diff(self, record: Any) -> SafeString | str:
        previous = record.prev_record
        if previous is None:
            return "first version"
        lines = unified_diff(
            getattr(previous, self.diff_field) or "",
            getattr(record, self.diff_field) or "",
            old_label=f"version {previous.history_id}",
            new_label=f"version {record.history_id}",
        )
        return render_diff(lines) if lines else f"{self.diff_field} unchanged"

    diff.short_description = "Diff"  # type: ignore[attr-defined]
