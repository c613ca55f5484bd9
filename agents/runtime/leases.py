"""Run ownership: a worker claims a run's step with a conditional update and a lease.

A lease that expires (its worker died) lets another worker claim the step; the reaper requeues runs
whose lease expired, at most ``MAX_REQUEUES`` times, then fails them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from agents.models import AgentRun, RunStatus, TerminationReason
from agents.models.runs import TERMINAL_STATUSES
from agents.runtime.parts import step_configuration

MAX_REQUEUES = 3


def lease_seconds() -> int:
    return int(settings.AGENT_STEP_LEASE_SECONDS)


@dataclass(frozen=True)
class Claim:
    run: AgentRun | None
    busy_until: datetime | None = None  # set when another worker holds a live lease
    step_status: str | None = None  # the status of a step already recorded at this index, if any

    @property
    def claimed(self) -> bool:
        return self.run is not None


def lease_claim(*, run_id: str, step_index: int, worker: str) -> Claim:
    """Claim step ``step_index`` of a non-terminal run. Nobody else can hold it at the same time.

    The claimed run comes with its configuration, serving model and provider (see
    :func:`agents.runtime.parts.step_configuration`), in one statement once the worker holds the
    configuration (:meth:`agents.models.runs.AgentRunQuerySet.claim`). Returns an empty claim when
    the step was already done (the run moved on or ended), and a claim with ``busy_until`` when
    another worker's lease is still live.
    """
    now = timezone.now()
    expires_at = now + timedelta(seconds=lease_seconds())
    claimed = AgentRun.objects.claim(
        run_id=run_id, step_index=step_index, worker=worker, now=now, expires_at=expires_at
    )
    if claimed is not None:
        run = claimed.run
        run.configuration = step_configuration(
            configuration_id=run.configuration_id,
            catalog=claimed.catalog_token,
            calibration=(claimed.model_calibration_factor, claimed.model_calibration_samples),
        )
        return Claim(run=run, step_status=claimed.step_status)
    busy_until = (
        AgentRun.objects.filter(id=run_id, next_step_index=step_index)
        .exclude(status__in=TERMINAL_STATUSES)
        .values_list("lease_expires_at", flat=True)
        .first()
    )
    return Claim(run=None, busy_until=busy_until)


def lease_renew(*, run: AgentRun, worker: str) -> bool:
    expires = timezone.now() + timedelta(seconds=lease_seconds())
    return bool(AgentRun.objects.filter(id=run.id, lease_owner=worker).update(lease_expires_at=expires))


def run_advance(*, run: AgentRun, worker: str, next_index: int) -> bool:
    """Move the run to ``next_index`` and release the lease. False when the lease was lost."""
    return bool(
        AgentRun.objects.filter(id=run.id, lease_owner=worker, next_step_index=next_index - 1).update(
            next_step_index=next_index, lease_owner="", lease_expires_at=None, updated_at=timezone.now()
        )
    )


def run_finish(
    *, run_id: str, reason: TerminationReason, worker: str | None = None, code: str = "", message: str = ""
) -> bool:
    """End a run once. ``worker`` (when given) must still hold the lease."""
    return bool(_unfinished(run_id, worker).update(**finish_fields(reason, code=code, message=message)))


@dataclass(frozen=True)
class StepTotals:
    """One step's usage, added to the run's cumulative totals (counters with ``F()``, so concurrent
    writers cannot lose an addition)."""

    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    completion_tokens: int
    calibration_ratio: float | None  # the run's last step ratio from now on

    def update(self) -> dict[str, Any]:
        return {
            "prompt_tokens_total": F("prompt_tokens_total") + self.prompt_tokens,
            "cached_tokens_total": F("cached_tokens_total") + self.cached_tokens,
            "cache_write_tokens_total": F("cache_write_tokens_total") + self.cache_write_tokens,
            "completion_tokens_total": F("completion_tokens_total") + self.completion_tokens,
            "last_calibration_ratio": self.calibration_ratio,
        }


def run_totals_add(*, run_id: str, totals: StepTotals) -> None:
    AgentRun.objects.filter(id=run_id).update(**totals.update())


def run_complete_with(*, run_id: str, worker: str, totals: StepTotals) -> bool:
    """Complete the run and add ``totals`` in one statement, if ``worker`` still holds the lease."""
    return bool(
        _unfinished(run_id, worker).update(**totals.update(), **finish_fields(TerminationReason.COMPLETED))
    )


def _unfinished(run_id: str, worker: str | None) -> QuerySet[AgentRun]:
    query = AgentRun.objects.filter(id=run_id).exclude(status__in=TERMINAL_STATUSES)
    return query.filter(lease_owner=worker) if worker is not None else query


def finish_fields(reason: TerminationReason, *, code: str = "", message: str = "") -> dict[str, Any]:
    status = {
        TerminationReason.COMPLETED: RunStatus.COMPLETED,
        TerminationReason.CANCELLED: RunStatus.CANCELLED,
    }.get(reason, RunStatus.FAILED)
    now = timezone.now()
    return {
        "status": status,
        "termination_reason": reason,
        "error_code": code[:64],
        "error_message": message[:500],
        "lease_owner": "",
        "lease_expires_at": None,
        "finished_at": now,
        "updated_at": now,
    }


@dataclass(frozen=True)
class ReapResult:
    requeued: tuple[tuple[str, int], ...]  # (run id, step index)
    failed: tuple[str, ...]


def runs_reap(*, now: datetime | None = None) -> ReapResult:
    """Requeue running runs whose lease expired (at most ``MAX_REQUEUES`` times each), else fail them."""
    now = now or timezone.now()
    expired = AgentRun.objects.filter(status=RunStatus.RUNNING, lease_expires_at__lt=now)
    requeued: list[tuple[str, int]] = []
    failed: list[str] = []
    for run in expired.only("id", "requeue_count", "next_step_index", "lease_owner"):
        with transaction.atomic():
            if run.requeue_count >= MAX_REQUEUES:
                if run_finish(
                    run_id=str(run.id),
                    reason=TerminationReason.RETRIES_EXHAUSTED,
                    worker=run.lease_owner,
                    code="lease_expired",
                    message="The run's worker stopped responding too many times.",
                ):
                    failed.append(str(run.id))
                continue
            if AgentRun.objects.filter(
                id=run.id, lease_owner=run.lease_owner, lease_expires_at__lt=now
            ).update(lease_owner="", lease_expires_at=None, requeue_count=F("requeue_count") + 1):
                requeued.append((str(run.id), run.next_step_index))
    return ReapResult(requeued=tuple(requeued), failed=tuple(failed))
