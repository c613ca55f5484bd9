"""The editors' dashboard on the admin index: per configuration, how full its recent runs' windows were,
what was refused in the last 24 hours and why, and what still runs in ``observe``; skills awaiting review.

Reads only. Every figure is one the rows already hold: a run's window fill is its last completed step's
prompt size (provider-reported, else our estimate; :func:`context_assembly.usage.usage_from_step`)
against the context window of the model that served that step, never the run's cumulative tokens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from agents.models import AgentRun, AgentStep, StepKind, StepStatus
from catalog.models import Configuration
from catalog.readiness import ReadinessRow, readiness_report
from context_assembly.usage import UsageValue, usage_from_step
from governance.models import GovernanceEvent
from governance.vocabulary import Decision, EventOutcome
from skills.review_page import review_queue

RECENT_RUNS = 20
REFUSAL_WINDOW = timedelta(hours=24)
# The events that mean something was not sent or not run, as opposed to redactions and flags.
REFUSALS = (Decision.CONTEXT_BLOCKED, Decision.TOOL_DENIED, Decision.RESPONSE_BLOCKED)


@dataclass(frozen=True)
class FillPoint:
    """One run: when it started, its last completed step's prompt size, and that step's window."""

    run_id: str
    at: datetime
    usage: UsageValue
    window: int

    @property
    def share(self) -> float:
        """Percent of the window (a display figure for the chart; usage facts carry no fraction)."""
        return 100 * (self.usage.value or 0) / max(self.window, 1)


@dataclass(frozen=True)
class ConfigurationPanel:
    identifier: str
    name: str
    points: tuple[FillPoint, ...]  # oldest first
    refusals: tuple[tuple[str, int], ...]  # (reason, count), most frequent first
    observe_rows: tuple[ReadinessRow, ...]

    @property
    def refusal_count(self) -> int:
        return sum(count for _, count in self.refusals)

    @property
    def observe_would_refuse(self) -> int:
        return sum(1 for row in self.observe_rows if row.would_be == "refused")


@dataclass(frozen=True)
class EditorsDashboard:
    panels: tuple[ConfigurationPanel, ...]
    skills_awaiting_review: int
    observe_rows: int  # distinct rows (kind, identifier) in observe that some configuration sends


def editors_dashboard(*, now: datetime | None = None) -> EditorsDashboard:
    """The dashboard for every active configuration, by identifier. A few queries per configuration."""
    now = now or timezone.now()
    configurations = list(
        Configuration.objects.filter(is_active=True).select_related("model__provider").order_by("identifier")
    )
    readiness = readiness_report(configurations=configurations)
    refusals = refusals_by_reason(since=now - REFUSAL_WINDOW)
    panels = tuple(
        ConfigurationPanel(
            identifier=configuration.identifier,
            name=configuration.name,
            points=window_fill(configuration),
            refusals=refusals.get(configuration.identifier, ()),
            observe_rows=tuple(
                row for row in readiness.rows if row.configuration == configuration.identifier
            ),
        )
        for configuration in configurations
    )
    return EditorsDashboard(
        panels=panels,
        skills_awaiting_review=review_queue().count(),
        observe_rows=readiness.summary["observe_rows"],
    )


def window_fill(configuration: Configuration, *, limit: int = RECENT_RUNS) -> tuple[FillPoint, ...]:
    """The ``limit`` most recent runs of ``configuration`` with a completed step, oldest first. One query."""
    last = AgentStep.objects.filter(
        run=OuterRef("pk"), status=StepStatus.COMPLETED, kind=StepKind.MODEL_CALL
    ).order_by("-index")
    runs = (
        AgentRun.objects.filter(configuration=configuration)
        .annotate(
            last_reported=Subquery(last.values("reported_prompt_tokens")[:1]),
            last_estimated=Subquery(last.values("estimated_prompt_tokens")[:1]),
            last_window=Subquery(last.values("model__context_window")[:1]),
        )
        .filter(Q(last_reported__gt=0) | Q(last_estimated__gt=0))
        .order_by("-created_at", "-pk")
        .values_list("pk", "created_at", "last_reported", "last_estimated", "last_window")[:limit]
    )
    default_window = configuration.model.context_window
    return tuple(
        FillPoint(str(pk), at, usage_from_step(reported, estimated), window or default_window)
        for pk, at, reported, estimated, window in reversed(list(runs))
    )


def refusals_by_reason(*, since: datetime) -> dict[str, tuple[tuple[str, int], ...]]:
    """Enforced refusals recorded since ``since``, per configuration identifier: (reason, count),
    most frequent first, then by reason. Observed events were sent, so they are not refusals."""
    rows = GovernanceEvent.objects.filter(
        created_at__gte=since, decision__in=REFUSALS, outcome=EventOutcome.ENFORCED
    ).values_list("configuration", "reason")
    counted: dict[str, Counter[str]] = {}
    for configuration, reason in rows:
        counted.setdefault(configuration, Counter())[reason or "(no reason recorded)"] += 1
    return {key: _ranked(counter.items()) for key, counter in counted.items()}


def _ranked(items: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(items, key=lambda item: (-item[1], item[0])))
