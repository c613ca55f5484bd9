"""What was consumed and what it cost, per day (UTC), API client and configuration.

Two ledgers feed it: the steps of runs (``AgentStep``, through its run's client and configuration)
and served completions (``CompletionRecord``). A model call counts once, on the day its row was
written; only calls that completed count (a refused or failed step sent nothing, or was not charged
a reported usage). Runs started outside the API (``manage.py run_agent``) have no client: their
client is ``""``. The management command ``cost_report`` and the admin's cost page show this report.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, DecimalField, F, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, TruncDate

from agents.models import AgentStep, StepStatus
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS, COST_QUANTUM, ZERO
from gateway.models import CompletionRecord

_COST = DecimalField(max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES)


@dataclass(frozen=True)
class CostRow:
    day: datetime.date
    client: str  # "" for runs started without an API client
    configuration: str
    calls: int  # model calls: completed steps and served completions
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    completion_tokens: int
    cost: Decimal

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "day": self.day.isoformat(), "cost": str(self.cost)}  # in field order


@dataclass(frozen=True)
class CostReport:
    start: datetime.date
    end: datetime.date  # inclusive
    rows: tuple[CostRow, ...]  # by day, client, configuration

    @property
    def total_cost(self) -> Decimal:
        return sum((row.cost for row in self.rows), ZERO.quantize(COST_QUANTUM))

    @property
    def total_calls(self) -> int:
        return sum(row.calls for row in self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "rows": [row.as_dict() for row in self.rows],
            "total": {"calls": self.total_calls, "cost": str(self.total_cost)},
        }


def cost_report(*, start: datetime.date, end: datetime.date) -> CostReport:
    """Every (day, client, configuration) with at least one model call from ``start`` to ``end``
    (inclusive, UTC days). Two grouped queries, whatever the number of calls."""
    since = datetime.datetime.combine(start, datetime.time.min, tzinfo=datetime.UTC)
    until = datetime.datetime.combine(
        end + datetime.timedelta(days=1), datetime.time.min, tzinfo=datetime.UTC
    )
    # A compaction that cleared tool results called no model (its model is empty): not a call.
    steps = AgentStep.objects.filter(
        status=StepStatus.COMPLETED, model__isnull=False, created_at__gte=since, created_at__lt=until
    ).values(
        day=TruncDate("created_at", tzinfo=datetime.UTC),
        client=Coalesce("run__api_client__name", Value("")),
        configuration_identifier=F("run__configuration__identifier"),
    )
    completions = CompletionRecord.objects.filter(created_at__gte=since, created_at__lt=until).values(
        day=TruncDate("created_at", tzinfo=datetime.UTC),
        client=F("api_client__name"),
        configuration_identifier=F("configuration__identifier"),
    )
    merged: dict[tuple[datetime.date, str, str], CostRow] = {}
    for row in (*_grouped(steps, "reported_prompt_tokens"), *_grouped(completions, "prompt_tokens")):
        key = (row.day, row.client, row.configuration)
        merged[key] = _add(merged[key], row) if key in merged else row
    return CostReport(start=start, end=end, rows=tuple(merged[key] for key in sorted(merged)))


def _grouped(query: QuerySet[Any, Any], prompt_field: str) -> Iterable[CostRow]:
    sums = query.order_by().annotate(
        calls=Count("id"),
        prompt=Coalesce(Sum(prompt_field), 0),
        cached=Coalesce(Sum("cached_tokens"), 0),
        written=Coalesce(Sum("cache_write_tokens"), 0),
        completion=Coalesce(Sum("completion_tokens"), 0),
        spent=Coalesce(Sum("cost"), Value(ZERO), output_field=_COST),
    )
    for row in sums:
        yield CostRow(
            day=row["day"],
            client=row["client"],
            configuration=row["configuration_identifier"],
            calls=row["calls"],
            prompt_tokens=row["prompt"],
            cached_tokens=row["cached"],
            cache_write_tokens=row["written"],
            completion_tokens=row["completion"],
            # PostgreSQL sums numeric exactly; SQLite (the embedded mode) sums in floating point, so
            # the sum is brought back to the stored ten decimal places.
            cost=Decimal(row["spent"]).quantize(COST_QUANTUM),
        )


def _add(left: CostRow, right: CostRow) -> CostRow:
    return CostRow(
        day=left.day,
        client=left.client,
        configuration=left.configuration,
        calls=left.calls + right.calls,
        prompt_tokens=left.prompt_tokens + right.prompt_tokens,
        cached_tokens=left.cached_tokens + right.cached_tokens,
        cache_write_tokens=left.cache_write_tokens + right.cache_write_tokens,
        completion_tokens=left.completion_tokens + right.completion_tokens,
        cost=left.cost + right.cost,
    )
