"""Readable version diffs on django-simple-history's history pages (snippets and skills).

Each version on the history page gets a unified diff of its text field against the previous version,
computed with :mod:`difflib` and rendered escaped: the text is editor- or upstream-authored and must
never render as HTML.
"""

from __future__ import annotations

import difflib
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
