"""The budget breakdown as one stacked bar of the window, rendered server-side (HTML/CSS); no script
runs in the browser. Every number shown is one the breakdown already holds. The charts (a run's context
use per step, the dashboard's window fill) are in editors/admin/charts.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# (breakdown key, label) in wire order, then what the window keeps back. The tail note is its own line
# in the breakdown; it is drawn only when a configuration adds one.
_USED = (
    ("system_prompt", "System prompt"),
    ("snippets", "Snippets"),
    ("skills", "Skills"),
    ("caller_context", "Caller context"),
    ("tool_specs", "Tools"),
    ("transcript", "Transcript"),
    ("tail_note", "Tail note"),
)
_KEPT_BACK = (("reserve", "Output reserve"), ("safety", "Safety margin"))


@dataclass(frozen=True)
class BarSegment:
    key: str
    label: str
    tokens: int
    share: float  # percent of the window
    width_css: str  # percent of the drawn bar, formatted for CSS (never localised)

    @property
    def share_label(self) -> str:
        return f"{self.share:.2f}%"


@dataclass(frozen=True)
class BudgetBar:
    """One stacked bar: used lines, the output reserve, the safety margin, and what is free.

    Segments sum to the window when the context fits. Over budget, the bar is drawn against what the
    context needs instead, and ``over`` says by how many tokens the budget is exceeded.
    """

    window: int
    budget: int
    estimated: int
    segments: tuple[BarSegment, ...]
    over: int

    @property
    def drawn(self) -> tuple[BarSegment, ...]:
        return tuple(segment for segment in self.segments if segment.tokens > 0)


def budget_bar(breakdown: Mapping[str, int]) -> BudgetBar:
    """The bar of a breakdown as produced by ``BudgetBreakdown.as_dict()`` (and stored on steps)."""
    window = max(int(breakdown["window"]), 1)
    remaining = int(breakdown["remaining"])
    figures = [(key, label, int(breakdown.get(key, 0))) for key, label in (*_USED, *_KEPT_BACK)]
    figures.append(("free", "Free", max(remaining, 0)))
    drawn_total = max(window, sum(tokens for _, _, tokens in figures))
    segments = tuple(
        BarSegment(
            key=key,
            label=label,
            tokens=tokens,
            share=100 * tokens / window,
            width_css=f"{100 * tokens / drawn_total:.4f}%",
        )
        for key, label, tokens in figures
    )
    return BudgetBar(
        window=window,
        budget=int(breakdown["budget"]),
        estimated=int(breakdown["estimated"]),
        segments=segments,
        over=max(-remaining, 0),
    )
