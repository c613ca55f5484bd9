"""Scores over time for editors: each score of one configuration (and one score name) as a point on a
time axis, one line per published version of the configuration, and per version its count, mean and
share of yes answers (docs/decisions/0038-scores-datasets-judges.md).

The chart reuses the geometry of :mod:`editors.admin.charts` (axes with titles and tick values, each
point's figures in its tooltip). A yes counts 1 and a no 0 on the axis; categories have no place on a
value axis and are counted in the summary only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from editors.admin.charts import (
    TIME_INSET,
    Box,
    Chart,
    Mark,
    Tick,
    _lines,
    _when,
    left_margin,
    round_ticks,
)
from gateway.models import Score, ScoreKind

MAX_POINTS = 200  # the newest scores drawn; the summary counts them all


@dataclass(frozen=True)
class VersionSummary:
    """One published version of a configuration: how its answers were scored."""

    version: int | None
    count: int
    mean: float | None  # of the numeric and yes/no scores (yes 1, no 0); None: only categories
    yes_share: float | None  # percent of yes among yes/no scores; None: none of that kind
    categories: tuple[tuple[str, int], ...]  # (category, count), most frequent first

    @property
    def label(self) -> str:
        return f"version {self.version}" if self.version is not None else "version unknown"


def version_summaries(scores: Sequence[Score]) -> tuple[VersionSummary, ...]:
    """Per published version, oldest version first (unknown last)."""
    by_version: dict[int | None, list[Score]] = {}
    for score in scores:
        by_version.setdefault(score.configuration_version, []).append(score)
    summaries = []
    for version in sorted(by_version, key=lambda v: (v is None, v or 0)):
        rows = by_version[version]
        values = [v for v in (score.chart_value for score in rows) if v is not None]
        answers = [score.boolean_value for score in rows if score.kind == ScoreKind.BOOLEAN]
        counted: dict[str, int] = {}
        for score in rows:
            if score.kind == ScoreKind.CATEGORY:
                counted[score.category_value] = counted.get(score.category_value, 0) + 1
        summaries.append(
            VersionSummary(
                version=version,
                count=len(rows),
                mean=sum(values) / len(values) if values else None,
                yes_share=100 * sum(1 for a in answers if a) / len(answers) if answers else None,
                categories=tuple(sorted(counted.items(), key=lambda item: (-item[1], item[0]))),
            )
        )
    return tuple(summaries)


def score_chart(scores: Sequence[Score], *, title: str, width: int = 640, height: int = 240) -> Chart | None:
    """``scores`` (one configuration, one name) with a value, oldest first, placed by when they were
    given; one line joins each version's scores. None when no score has a value to draw."""
    drawn = sorted((s for s in scores if s.chart_value is not None), key=lambda s: (s.created_at, s.pk))
    drawn = drawn[-MAX_POINTS:]
    if not drawn:
        return None
    values = [float(s.chart_value or 0.0) for s in drawn]
    ticks = round_ticks(max(max(values), 1.0))
    top = ticks[-1]
    box = Box(
        left=left_margin([f"{value:g}" for value in ticks]), top=20, right=width - 16, bottom=height - 42
    )
    times = [s.created_at.timestamp() for s in drawn]
    start, span = min(times), max(times) - min(times)

    def x(at: float) -> float:
        return box.x((at - start) / span if span else 0.5, inset=TIME_INSET)

    placed = [(x(at), box.y(value / top)) for at, value in zip(times, values, strict=True)]
    lines: list[str] = []
    first_of: dict[int | None, int] = {}
    for version in dict.fromkeys(s.configuration_version for s in drawn):
        mine = [p for p, s in zip(placed, drawn, strict=True) if s.configuration_version == version]
        lines.extend(_lines(mine))
        first_of[version] = next(i for i, s in enumerate(drawn) if s.configuration_version == version)
    marks = tuple(
        Mark(
            x=where[0],
            y=where[1],
            css=f"score-point version-{score.configuration_version or 'unknown'}",
            filled=True,
            title=f"{score.created_at:%Y-%m-%d %H:%M} UTC: {score.name} {score.value_label} "
            f"(version {score.configuration_version or 'unknown'}, {score.answer_id})",
            label=f"v{score.configuration_version}" if first_of.get(score.configuration_version) == i else "",
        )
        for i, (score, where) in enumerate(zip(drawn, placed, strict=True))
    )
    return Chart(
        css="score-chart",
        description=f"{title}: {len(drawn)} scores over time, one line per published version",
        width=width,
        height=height,
        box=box,
        y_title="Score (yes = 1)",
        y2_title="",
        x_title="Scored (UTC)",
        y_ticks=tuple(Tick(box.y(value / top), f"{value:g}") for value in ticks),
        x_ticks=_time_ticks(drawn[0].created_at, drawn[-1].created_at, x),
        limit=None,
        lines=tuple(lines),
        marks=marks,
        note="Each point is one score; a line joins the scores of one published version, named (v…) "
        "above its first point.",
        legend=False,
    )


def _time_ticks(first: datetime, last: datetime, place: Callable[[float], float]) -> tuple[Tick, ...]:
    """The first and the last score's times at the ends of the axis."""
    if first == last:
        return (Tick(place(first.timestamp()), _when(first)),)
    return (
        Tick(place(first.timestamp()), _when(first), anchor="start"),
        Tick(place(last.timestamp()), _when(last), anchor="end"),
    )
