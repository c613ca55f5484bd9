"""Drawings for editors: the budget breakdown as one stacked bar of the window, a run's context usage,
and the window fill of a configuration's recent runs (the editors' dashboard).

Both are computed here from plain figures and rendered server-side (HTML/CSS and inline SVG); no
script runs in the browser. Every number shown is one the breakdown or the step rows already hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents.dashboard import FillPoint
from context_assembly.usage import UsageValue
from governance.vocabulary import Provenance

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


@dataclass(frozen=True)
class UsagePoint:
    step_index: int
    usage: UsageValue


def usage_chart(
    points: Sequence[UsagePoint], window: int, *, width: int = 360, height: int = 90
) -> SafeString:
    """An inline SVG line of used tokens per step against the window (the dashed top line).

    Steps whose usage is unavailable leave a gap in the line rather than a misleading zero.
    """
    pad, window = 8, max(window, 1)
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    step = inner_w / max(len(points) - 1, 1)

    def y(tokens: int) -> float:
        return pad + inner_h * (1 - min(tokens, window) / window)

    known = [(pad + i * step, y(p.usage.value), p) for i, p in enumerate(points) if p.usage.value is not None]
    line = " ".join(f"{x:.1f},{yy:.1f}" for x, yy, _ in known)
    dots = format_html_join(
        "",
        '<circle cx="{}" cy="{}" r="3" fill="#417690"><title>step {}: {} tokens ({})</title></circle>',
        (
            (f"{x:.1f}", f"{yy:.1f}", p.step_index, f"{p.usage.value:,}", p.usage.provenance)
            for x, yy, p in known
        ),
    )
    return format_html(
        '<svg class="usage-chart" role="img" aria-label="Context usage per step against a window of {} tokens" '
        'width="{}" height="{}" viewBox="0 0 {} {}">'
        '<line class="window" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ba2121" stroke-dasharray="4 3"><title>window: {} tokens</title></line>'
        '<polyline class="used" points="{}" fill="none" stroke="#417690" stroke-width="2"/>{}</svg>',
        f"{window:,}",
        width,
        height,
        width,
        height,
        pad,
        pad,
        width - pad,
        pad,
        f"{window:,}",
        line,
        dots,
    )


def window_fill_chart(points: Sequence[FillPoint], *, width: int = 320, height: int = 96) -> SafeString:
    """An inline SVG of recent runs' window fill over time: each run's last completed step's prompt size
    as a share of its window, placed by the run's start time. A provider-reported figure is a filled dot,
    our estimate a hollow one; each dot's title says which. The dashed top line is the full window; the
    first and last runs' start times are written under the axis."""
    pad, labels = 8, 14
    inner_w, inner_h = width - 2 * pad, height - 2 * pad - labels
    times = [point.at.timestamp() for point in points]
    span = (max(times) - min(times)) if len(times) > 1 else 0.0

    def x(at: float) -> float:
        return pad + (inner_w * (at - min(times)) / span if span else inner_w / 2)

    def y(share: float) -> float:
        return pad + inner_h * (1 - min(share, 100.0) / 100)

    placed = [(x(at), y(point.share), point) for at, point in zip(times, points, strict=True)]
    line = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in placed)
    dots = format_html_join(
        "",
        '<circle class="fill-point {}" cx="{}" cy="{}" r="3.5" fill="{}" stroke="#417690" stroke-width="1.5">'
        "<title>{}: {} of {} tokens ({}%), {}</title></circle>",
        (
            (
                point.usage.provenance,
                f"{px:.1f}",
                f"{py:.1f}",
                "#417690" if point.usage.provenance == Provenance.PROVIDER_REPORTED else "#fff",
                point.at.strftime("%Y-%m-%d %H:%M UTC"),
                f"{point.usage.value:,}",
                f"{point.window:,}",
                f"{point.share:.1f}",
                Provenance(point.usage.provenance).label.lower(),
            )
            for px, py, point in placed
        ),
    )
    return format_html(
        '<svg class="window-fill-chart" role="img" width="{}" height="{}" viewBox="0 0 {} {}" '
        'aria-label="Window fill of the last {} runs">'
        '<line class="window" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ba2121" stroke-dasharray="4 3">'
        "<title>the full window</title></line>"
        '<text x="{}" y="{}" font-size="9" fill="#ba2121" text-anchor="end">window</text>'
        '<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ccc"/>'
        '<text class="from" x="{}" y="{}" font-size="9" fill="#666">{}</text>'
        '<text class="to" x="{}" y="{}" font-size="9" fill="#666" text-anchor="end">{}</text>'
        '<polyline class="fill" points="{}" fill="none" stroke="#417690" stroke-width="1.5"/>{}</svg>',
        width,
        height,
        width,
        height,
        len(points),
        pad,
        pad,
        width - pad,
        pad,
        width - pad,
        pad + 10,
        pad,
        pad + inner_h,
        width - pad,
        pad + inner_h,
        pad,
        height - 4,
        _when(points[0].at) if points else "",
        width - pad,
        height - 4,
        _when(points[-1].at) if points else "",
        line,
        dots,
    )


def _when(at: datetime) -> str:
    return at.strftime("%d %b %H:%M")
