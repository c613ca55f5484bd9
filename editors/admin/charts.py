"""Charts for editors, drawn on the server as inline SVG: labelled axes with tick values and units, the
figure of the points that matter written beside them, and every point's figures in its tooltip. No
script runs in the browser and nothing is fetched.

Two charts: a run's context used per step against its window (the run page), and the window fill of
a configuration's recent runs (the editors' dashboard). The geometry is computed here from figures the
rows already hold; the template (admin/editors/includes/chart.html) only places it and escapes every text.

The value axis is honest about its scale: it runs to the window when the largest figure reaches a
quarter of it, and otherwise to a round figure just above the largest one, with the window named in a
note under the chart (a 500-token context in a 128,000-token window would otherwise be a flat line
on the floor).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from context_assembly.usage import UsageValue
from editors.dashboard import FillPoint
from governance.vocabulary import Provenance

# Points with their figure written beside them: all of them up to this many, else the first, the
# last and the largest (the tooltips always hold every figure).
LABEL_ALL_UP_TO = 10
MAX_X_TICKS = 20
TIME_INSET = 16  # pixels between the value axis and the first run (its figure must clear the ticks)
TIME_LABEL_ROOM = 110  # pixels between time labels' anchors ("30 Nov 09:00" is about 70 wide)
# The value axis' title is written up the left edge, its baseline at Y_TITLE_X; the tick labels end
# TICK_GAP pixels left of the axis. The plot starts where the widest tick label leaves room for both.
FONT_SIZE = 11
Y_TITLE_X = 14
TITLE_DESCENT = 0.25 * FONT_SIZE  # how far glyphs reach below the title's baseline (rightwards)
TITLE_GAP = 6
TICK_GAP = 6
# Widths in em of sans-serif characters (an upper estimate): a digit 0.56, the others below or 0.6.
_EM = {"%": 0.89, ",": 0.28, ".": 0.28, " ": 0.28, "-": 0.33}


@dataclass(frozen=True)
class Box:
    """The plot area inside the margins, in pixels from the top left of the drawing."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def center_x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def center_y(self) -> float:
        return (self.top + self.bottom) / 2

    def x(self, fraction: float, *, inset: float = 0.0) -> float:
        """``fraction`` of the width, ``inset`` pixels in from either side (room for a label)."""
        return self.left + inset + (self.right - self.left - 2 * inset) * fraction

    def y(self, fraction: float) -> float:
        """``fraction`` of the value axis (0 at the bottom, 1 at the top)."""
        return self.bottom - (self.bottom - self.top) * min(max(fraction, 0.0), 1.0)


def label_width(text: str) -> float:
    """An upper estimate of ``text``'s width in pixels at the charts' font size."""
    return FONT_SIZE * sum(_EM.get(c, 0.56 if c.isdigit() else 0.6) for c in text)


def left_margin(labels: Sequence[str], least: float = 0.0) -> float:
    """Where the plot starts: right of the axis title and the widest of the tick ``labels``."""
    widest = max((label_width(label) for label in labels), default=0.0)
    return max(least, math.ceil(Y_TITLE_X + TITLE_DESCENT + TITLE_GAP + widest + TICK_GAP))


@dataclass(frozen=True)
class Tick:
    position: float  # y for the value axis, x for the other
    label: str
    secondary: str = ""  # the same level in another unit, on the right-hand axis
    anchor: str = "middle"  # text-anchor of an x tick's label


@dataclass(frozen=True)
class Mark:
    x: float
    y: float
    css: str
    filled: bool  # provider-reported figures are filled dots, estimates hollow ones
    title: str
    label: str  # written above the point when not empty


@dataclass(frozen=True)
class Chart:
    css: str
    description: str  # the drawing's accessible name
    width: int
    height: int
    box: Box
    y_title: str
    y2_title: str  # the right-hand axis' title, or "" for none
    x_title: str
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    limit: Tick | None  # the window line, when it is within the scale
    lines: tuple[str, ...]  # polylines through consecutive known points
    marks: tuple[Mark, ...]
    note: str  # said under the chart (the window above a zoomed scale), or ""
    legend: bool = True  # the provenance legend (filled: provider reported; hollow: estimated)
    y_title_x: float = Y_TITLE_X  # the baseline of the value axis' title, written upwards

    def html(self) -> SafeString:
        # The template escapes every value; render_to_string returns it marked safe.
        return render_to_string("admin/editors/includes/chart.html", {"chart": self})


@dataclass(frozen=True)
class ValueAxis:
    top: float  # the value at the top of the axis
    ticks: tuple[float, ...]


def value_axis(peak: float, limit: float, *, whole: bool = False) -> tuple[ValueAxis, bool]:
    """The value axis for figures up to ``peak`` against ``limit`` (the window), and whether the limit
    is above it. Quarters of the limit when the peak reaches a quarter of it; round ticks to the peak
    otherwise (and past the limit, round ticks that include the peak). ``whole``: ticks are integers
    (token counts)."""
    if peak > limit:
        ticks = round_ticks(peak, whole=whole)
        return ValueAxis(ticks[-1], ticks), False
    if peak * 4 >= limit or peak <= 0:
        return ValueAxis(limit, tuple(limit * quarter / 4 for quarter in range(5))), False
    ticks = round_ticks(peak, whole=whole)
    return ValueAxis(ticks[-1], ticks), True


def round_ticks(peak: float, count: int = 4, *, whole: bool = False) -> tuple[float, ...]:
    """0 and about ``count`` steps of 1, 2, 2.5 or 5 times a power of ten, the last at or above ``peak``;
    ``whole``: only integer steps (so no two ticks of a token axis read the same)."""
    raw = peak / count
    magnitude = 10 ** math.floor(math.log10(raw))
    steps_of = [m * magnitude for m in (1, 2, 2.5, 5, 10)]
    if whole:
        steps_of = [step for step in steps_of if step >= 1 and step == int(step)] or [1.0]
    step = next((step for step in steps_of if step * count >= peak), steps_of[-1])
    steps = math.ceil(peak / step - 1e-9)
    return tuple(step * i for i in range(steps + 1))


def percent(value: float) -> str:
    """A share for a label: whole percent from 10, one decimal from 1, two below and two significant
    digits below 0.1 (so small shares never all read "0%"); no trailing zeros."""
    if 0 < value < 0.1:
        return f"{value:.2g}%"
    digits = 0 if value >= 10 else 1 if value >= 1 else 2
    text = f"{value:.{digits}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + "%"


def tokens(value: float) -> str:
    return f"{value:,.0f}"


def _value_ticks(
    box: Box, axis: ValueAxis, label: Callable[[float], str], secondary: Callable[[float], str] | None
) -> tuple[Tick, ...]:
    return tuple(
        Tick(box.y(value / axis.top), label(value), secondary(value) if secondary else "")
        for value in axis.ticks
    )


def _labelled(values: Sequence[float | None]) -> set[int]:
    """The indexes of the points whose figure is written beside them."""
    known = [i for i, value in enumerate(values) if value is not None]
    if len(known) <= LABEL_ALL_UP_TO:
        return set(known)
    peak = max(known, key=lambda i: values[i] or 0)
    return {known[0], known[-1], peak}


def _lines(placed: Sequence[tuple[float, float] | None]) -> tuple[str, ...]:
    """One polyline per run of consecutive known points: an unknown figure leaves a gap, not a zero."""
    lines: list[str] = []
    current: list[str] = []
    for point in (*placed, None):
        if point is None:
            if len(current) > 1:
                lines.append(" ".join(current))
            current = []
        else:
            current.append(f"{point[0]:.1f},{point[1]:.1f}")
    return tuple(lines)


@dataclass(frozen=True)
class UsagePoint:
    step_index: int
    usage: UsageValue


def usage_chart(points: Sequence[UsagePoint], window: int, *, width: int = 640, height: int = 240) -> Chart:
    """Context used per step (each completed step's prompt size, provider-reported else estimated) in
    tokens, against the run's window; the right-hand axis gives the same levels as shares of the
    window. A step whose usage is unavailable has no point and breaks the line."""
    window = max(window, 1)
    values = [point.usage.value for point in points]
    axis, zoomed = value_axis(max((v for v in values if v is not None), default=0), window, whole=True)
    left = left_margin([tokens(value) for value in axis.ticks], least=66)
    box = Box(left=left, top=20, right=width - 56, bottom=height - 42)
    gap = 1 / len(points)

    def place(i: int, value: int) -> tuple[float, float]:
        return box.x(gap * (i + 0.5)), box.y(value / axis.top)

    placed = [place(i, v) if v is not None else None for i, v in enumerate(values)]
    labelled = _labelled(values)
    marks = tuple(
        _usage_mark(point, where, window, labelled=i in labelled)
        for i, (point, where) in enumerate(zip(points, placed, strict=True))
        if where is not None
    )
    every = math.ceil(len(points) / MAX_X_TICKS)
    return Chart(
        css="usage-chart",
        description=f"Context used per step, in tokens, against a window of {window:,} tokens",
        width=width,
        height=height,
        box=box,
        y_title="Context used (tokens)",
        y2_title="Share of the window",
        x_title="Step",
        y_ticks=_value_ticks(box, axis, tokens, lambda value: percent(100 * value / window)),
        x_ticks=tuple(
            Tick(box.x(gap * (i + 0.5)), str(point.step_index))
            for i, point in enumerate(points)
            if i % every == 0
        ),
        limit=None if zoomed else Tick(box.y(window / axis.top), f"window {window:,} tokens"),
        lines=_lines(placed),
        marks=marks,
        note=_zoom_note(axis, window) if zoomed else "",
    )


def _usage_mark(point: UsagePoint, where: tuple[float, float], window: int, *, labelled: bool) -> Mark:
    value = point.usage.value or 0
    provenance = Provenance(point.usage.provenance)
    return Mark(
        x=where[0],
        y=where[1],
        css=f"used-point {provenance.value}",
        filled=provenance == Provenance.PROVIDER_REPORTED,
        title=f"Step {point.step_index}: {value:,} of {window:,} tokens "
        f"({percent(100 * value / window)} of the window), {provenance.label.lower()}",
        label=tokens(value) if labelled else "",
    )


def _zoom_note(axis: ValueAxis, window: int) -> str:
    return (
        f"The window, {window:,} tokens, is above this scale: the axis ends at {tokens(axis.top)} "
        f"tokens ({percent(100 * axis.top / window)} of the window)."
    )


def window_fill_chart(points: Sequence[FillPoint], *, width: int = 400, height: int = 190) -> Chart:
    """Recent runs' window fill: each run's last completed step's prompt size as a share of that step's
    window, placed by the run's start time; the time axis is labelled at the first, middle and last run."""
    shares = [point.share for point in points]
    axis, zoomed = value_axis(max(shares, default=0.0), 100.0)
    box = Box(
        left=left_margin([percent(value) for value in axis.ticks]),
        top=20,
        right=width - 16,
        bottom=height - 42,
    )
    times = [point.at.timestamp() for point in points]
    start, span = min(times, default=0.0), (max(times) - min(times)) if len(times) > 1 else 0.0

    def x(at: float) -> float:
        return box.x((at - start) / span if span else 0.5, inset=TIME_INSET)

    placed = [(x(at), box.y(share / axis.top)) for at, share in zip(times, shares, strict=True)]
    labelled = _labelled(shares)
    return Chart(
        css="window-fill-chart",
        description=f"Window fill of the last {len(points)} runs, in percent of each run's window",
        width=width,
        height=height,
        box=box,
        y_title="Window fill (%)",
        y2_title="",
        x_title="Run started (UTC)",
        y_ticks=_value_ticks(box, axis, percent, None),
        x_ticks=_time_ticks(points, x),
        limit=None if zoomed else Tick(box.y(100 / axis.top), "window"),
        lines=_lines(placed),
        marks=tuple(
            _fill_mark(point, where, labelled=i in labelled)
            for i, (point, where) in enumerate(zip(points, placed, strict=True))
        ),
        note=(
            f"The full window is above this scale: the axis ends at {percent(axis.top)}." if zoomed else ""
        ),
    )


def _fill_mark(point: FillPoint, where: tuple[float, float], *, labelled: bool) -> Mark:
    provenance = Provenance(point.usage.provenance)
    return Mark(
        x=where[0],
        y=where[1],
        css=f"fill-point {provenance.value}",
        filled=provenance == Provenance.PROVIDER_REPORTED,
        title=f"{point.at:%Y-%m-%d %H:%M} UTC: {point.usage.value or 0:,} of {point.window:,} tokens "
        f"({percent(point.share)}), {provenance.label.lower()}",
        label=percent(point.share) if labelled else "",
    )


def _time_ticks(points: Sequence[FillPoint], x: Callable[[float], float]) -> tuple[Tick, ...]:
    """The first and last runs' start times at the ends of the axis, and the middle one's between."""
    if not points:
        return ()
    if len(points) == 1:
        return (Tick(x(points[0].at.timestamp()), _when(points[0].at)),)
    first, last = points[0].at, points[-1].at
    ticks = [Tick(x(first.timestamp()), _when(first), anchor="start")]
    middle = points[len(points) // 2].at
    place = x(middle.timestamp())
    # Only where its label cannot run into the ends' labels.
    if min(place - ticks[0].position, x(last.timestamp()) - place) >= TIME_LABEL_ROOM:
        ticks.append(Tick(place, _when(middle)))
    return (*ticks, Tick(x(last.timestamp()), _when(last), anchor="end"))


def _when(at: datetime) -> str:
    return at.strftime("%d %b %H:%M")
