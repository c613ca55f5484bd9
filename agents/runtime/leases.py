"""Run ownership: a worker claims a run's step with a conditional update and a lease.

A lease that expires (its worker died) lets another worker claim the step; the reaper requeues runs
whose lease expired, at most ``MAX_REQUEUES`` times, then fails them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from agents.models import AgentRun, RunStatus, TerminationReason
from agents.models.catalog import CATALOG_VERSION_ID
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
    :func:`agents.runtime.parts.step_configuration`). Returns an empty claim when the step was
    already done (the run moved on or ended), and a claim with ``busy_until`` when another worker's
    lease is still live.
    """
    run = _claim_update(run_id=run_id, step_index=step_index, worker=worker)
    if run is not None:
        return Claim(run=run, step_status=run.__dict__["step_status"])
    row = (
        AgentRun.objects.filter(id=run_id, next_step_index=step_index)
        .exclude(status__in=TERMINAL_STATUSES)
        .values_list("lease_expires_at", flat=True)
        .first()
    )
    return Claim(run=None, busy_until=row)


def _claim_update(*, run_id: str, step_index: int, worker: str) -> AgentRun | None:
    """The conditional claim as one ``UPDATE … RETURNING`` statement (PostgreSQL, SQLite ≥ 3.35).

    It returns the claimed row with, read in the same statement, the catalogue token, the serving
    model's calibration, the client's name and the status of a step already recorded at this index.
    A step so starts with one round trip instead of an update, a select and the joins for its
    configuration (which comes from the worker's cache for that token). The ORM has no
    ``UPDATE … RETURNING``; ``raw()`` maps the columns by name and applies each field's converters.
    """
    now = timezone.now()
    terminal = ", ".join(["%s"] * len(TERMINAL_STATUSES))
    sql = f"""
        UPDATE agents_agentrun
        SET status = %s, lease_owner = %s, lease_expires_at = %s, updated_at = %s
        WHERE id = %s AND next_step_index = %s AND status NOT IN ({terminal})
          AND (lease_expires_at IS NULL OR lease_expires_at < %s OR lease_owner = %s)
        RETURNING *,
          (SELECT token FROM agents_catalogversion WHERE id = {CATALOG_VERSION_ID}) AS catalog_token,
          (SELECT m.calibration_factor FROM agents_llmmodel m JOIN agents_configuration c ON c.model_id = m.id
            WHERE c.id = agents_agentrun.configuration_id) AS model_calibration_factor,
          (SELECT m.calibration_samples FROM agents_llmmodel m JOIN agents_configuration c ON c.model_id = m.id
            WHERE c.id = agents_agentrun.configuration_id) AS model_calibration_samples,
          (SELECT a.name FROM agents_apiclient a WHERE a.id = agents_agentrun.api_client_id) AS api_client_name,
          (SELECT s.status FROM agents_agentstep s WHERE s.run_id = agents_agentrun.id AND s."index" = %s)
            AS step_status
    """
    expires = now + timedelta(seconds=lease_seconds())
    params = [
        RunStatus.RUNNING.value,
        worker,
        _db_datetime(expires),
        _db_datetime(now),
        AgentRun._meta.pk.get_db_prep_value(uuid.UUID(str(run_id)), connection),
        step_index,
        *[str(status) for status in TERMINAL_STATUSES],
        _db_datetime(now),
        worker,
        step_index,
    ]
    claimed = list(AgentRun.objects.raw(sql, params))
    if not claimed:
        return None
    run = claimed[0]
    read = run.__dict__  # the columns RETURNING added beside the model's own
    token = read["catalog_token"]
    run.configuration = step_configuration(
        configuration_id=run.configuration_id,
        catalog=token if isinstance(token, str) else None,
        calibration=(float(read["model_calibration_factor"]), int(read["model_calibration_samples"])),
    )
    return run


def _db_datetime(value: datetime) -> object:
    return connection.ops.adapt_datetimefield_value(value)


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


def run_finish_with(*, run_id: str, worker: str, reason: TerminationReason, **fields: Any) -> bool:
    """:func:`run_finish` for a lease holder, setting ``fields`` in the same statement."""
    return bool(_unfinished(run_id, worker).update(**fields, **finish_fields(reason)))


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
