"""Run ownership: a worker claims a run's step with a conditional update and a lease.

A lease that expires (its worker died) lets another worker claim the step. The reaper
(:func:`runs_reap`) requeues the runs nothing will move on its own:

- running runs whose lease expired (the worker died mid-step);
- runs waiting for a worker longer than ``AGENT_QUEUED_STALE_SECONDS``: queued with no step started,
  or running between two steps with no lease (the step's message was lost: a broker restart, a
  publish that failed after the commit).

A requeue sends the step's message again. That is safe whether or not the first message was lost:
the claim takes the step only while the run is at that index and nobody holds a live lease, so a
second copy finds the step done (skipped) or leased (retried after the lease), and never runs it
twice. Every requeue of either kind counts towards ``MAX_REQUEUES``; past it the run ends ``failed``
(``retries_exhausted``, error code ``requeue_limit``).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from agents.models import AgentRun, RunStatus, TerminationReason
from agents.models.runs import TERMINAL_STATUSES
from agents.runtime.parts import step_configuration
from catalog.models.sql import Table, executed, statement_cursor, statement_text

MAX_REQUEUES = 3
# The terminal statuses as an update's conditions pass them (a status is stored as its text).
TERMINAL_PARAMS = [status.value for status in TERMINAL_STATUSES]
REQUEUE_LIMIT = "requeue_limit"


def lease_seconds() -> int:
    return int(settings.AGENT_STEP_LEASE_SECONDS)


def queued_stale_seconds() -> int:
    return int(settings.AGENT_QUEUED_STALE_SECONDS)


@dataclass(frozen=True)
class Claim:
    run: AgentRun | None
    busy_until: datetime | None = None  # set when another worker holds a live lease
    step_status: str | None = None  # the status of a step already recorded at this index, if any
    messages: int | None = None  # the run's stored messages, as the claim found them

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
        return Claim(run=run, step_status=claimed.step_status, messages=claimed.messages)
    busy_until = (
        AgentRun.objects.filter(id=run_id, next_step_index=step_index)
        .exclude(status__in=TERMINAL_STATUSES)
        .values_list("lease_expires_at", flat=True)
        .first()
    )
    return Claim(run=None, busy_until=busy_until)


class LeaseLost(Exception):
    """The worker no longer holds the run's lease at this step: another worker took the step over, or
    the reaper or an end of the run released it. Whatever the step produced is not kept."""


@dataclass(frozen=True)
class HeldLease:
    """A step's lease as its worker holds it: run, step index and owner must all still match."""

    run_id: str
    step_index: int
    worker: str

    def query(self) -> Q:
        return Q(id=self.run_id, lease_owner=self.worker, next_step_index=self.step_index)


def _held(condition: Q) -> QuerySet[AgentRun]:
    return AgentRun.objects.filter(condition).exclude(status__in=TERMINAL_STATUSES)


def held_update_sql(
    held: HeldLease, values: dict[str, object], connection: BaseDatabaseWrapper, *, unfinished: bool = True
) -> tuple[str, list[Any]]:
    """``AgentRun.objects.filter(held.query()).exclude(status__in=TERMINAL_STATUSES).update(**values)``
    (without the ``exclude`` when not ``unfinished``) as one ``UPDATE`` of SQL text and its parameters:
    a step makes several of these, and building the ORM's query cost more than running it
    (``catalog/models/sql.py``)."""
    run = Table(AgentRun, connection)

    def build() -> str:
        assignments = ", ".join(f"{run.column(name)} = %s" for name in values)
        sql = (
            f"UPDATE {run.name} SET {assignments} WHERE {run['pk']} = %s "
            f"AND {run['lease_owner']} = %s AND {run['next_step_index']} = %s"
        )
        if unfinished:
            sql += f" AND {run['status']} NOT IN ({', '.join(['%s'] * len(TERMINAL_STATUSES))})"
        return sql

    sql = statement_text(connection, ("held_update", tuple(values), unfinished), build)
    params: list[Any] = [run.value(name, value) for name, value in values.items()]
    params += [run.value("pk", uuid.UUID(held.run_id)), held.worker, held.step_index]
    if unfinished:
        params += TERMINAL_PARAMS
    return sql, params


def _held_update(held: HeldLease, values: dict[str, object], *, unfinished: bool = True) -> int:
    """:func:`held_update_sql` run; the rows updated (0 or 1)."""
    connection = connections[router.db_for_write(AgentRun)]
    sql, params = held_update_sql(held, values, connection, unfinished=unfinished)
    with statement_cursor(connection) as cursor:
        return int(executed(cursor, sql, params).rowcount)


def lease_expiry() -> datetime:
    """When a lease taken or renewed now expires."""
    return timezone.now() + timedelta(seconds=lease_seconds())


def lease_hold(held: HeldLease, values: dict[str, object] | None = None) -> None:
    """Renew ``held`` if its worker still holds it, else raise :class:`LeaseLost`; with ``values``,
    set those instead (:func:`advanced_values`: move the run on and release the lease).

    Called first inside the transaction that records a step's result: the update keeps the run's row
    locked until the commit, so a claim by another worker waits for the commit and then finds a live
    lease; and a worker whose lease was taken over (a new owner, a requeue, the run ended) updates
    nothing and keeps nothing. One primary-key update."""
    if not _held_update(held, {"lease_expires_at": lease_expiry()} if values is None else values):
        raise LeaseLost(f"run {held.run_id} step {held.step_index} is no longer leased by this worker")


def leases_renew(held: Collection[HeldLease]) -> tuple[HeldLease, ...]:
    """Extend every lease of ``held`` whose worker still holds it by a full lease from now, in one
    statement; return those it did not extend (lost: taken over, requeued, or their run ended). A
    renewal never takes a lease: a lease another worker holds, or a step the run has left, is
    unchanged. A lease nobody renews expires, and another worker may then claim its step."""
    if not held:
        return ()
    expires = timezone.now() + timedelta(seconds=lease_seconds())
    condition = Q()
    for lease in held:
        condition |= lease.query()
    if _held(condition).update(lease_expires_at=expires) == len(held):
        return ()
    kept = set(_held(condition).values_list("id", "lease_owner", "next_step_index"))
    return tuple(
        lease for lease in held if (uuid.UUID(lease.run_id), lease.worker, lease.step_index) not in kept
    )


def run_advance(*, run: AgentRun, worker: str, next_index: int) -> bool:
    """Move the run to ``next_index`` and release the lease. False when the lease was lost."""
    held = HeldLease(run_id=str(run.id), step_index=next_index - 1, worker=worker)
    return bool(_held_update(held, advanced_values(next_index), unfinished=False))


def advanced_values(next_index: int) -> dict[str, object]:
    """What moving a run to ``next_index`` sets on its row: the step, the lease released, the time
    its wait for a worker began."""
    return {
        "next_step_index": next_index,
        "lease_owner": "",
        "lease_expires_at": None,
        "updated_at": timezone.now(),
    }


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
    cost: Decimal
    calibration_ratio: float | None  # the run's last step ratio from now on

    def added(self) -> dict[str, int | Decimal]:
        """The run's counters and what this step adds to each."""
        return {
            "prompt_tokens_total": self.prompt_tokens,
            "cached_tokens_total": self.cached_tokens,
            "cache_write_tokens_total": self.cache_write_tokens,
            "completion_tokens_total": self.completion_tokens,
            "cost_total": self.cost,
        }


def run_totals_held_sql(*, held: HeldLease, totals: StepTotals, complete: bool) -> tuple[str, list[Any]]:
    """The ``UPDATE`` that adds ``totals`` to the run if ``held``'s worker still holds its lease at its
    step (as :func:`lease_hold` checks), and also renews the lease or, with ``complete``, ends the run
    completed and releases it; with its parameters, not run. First in the statement or transaction
    that records a step (``agents/runtime/held_writes.py``), it is that record's lease check (the
    row stays locked until the commit); it updates nothing when the lease was lost."""
    values: dict[str, object] = {"last_calibration_ratio": totals.calibration_ratio}
    if complete:
        values |= finish_fields(TerminationReason.COMPLETED)
    else:
        values["lease_expires_at"] = lease_expiry()
    return AgentRun.objects.totals_add_sql(
        run_id=held.run_id,
        added=totals.added(),
        values=values,
        lease_owner=held.worker,
        step_index=held.step_index,
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


class ReapCause(StrEnum):
    LEASE_EXPIRED = "lease_expired"  # the worker died mid-step
    LOST = "lost"  # waited past AGENT_QUEUED_STALE_SECONDS with no lease: its message was lost


@dataclass(frozen=True)
class Requeue:
    run_id: str
    step_index: int
    cause: ReapCause


@dataclass(frozen=True)
class Ended:
    run_id: str
    cause: ReapCause


@dataclass(frozen=True)
class ReapResult:
    requeued: tuple[Requeue, ...]
    failed: tuple[Ended, ...]  # runs ended past MAX_REQUEUES


_LIMIT_MESSAGES = {
    ReapCause.LEASE_EXPIRED: "The run was requeued {limit} times and its worker stopped responding again.",
    ReapCause.LOST: "The run was requeued {limit} times and its next step was not picked up again.",
}


def runs_reap(*, now: datetime | None = None) -> ReapResult:
    """Requeue the runs described in the module docstring, at most ``MAX_REQUEUES`` times each, else
    end them. Each requeue or end is one conditional update on the state the run was read in, so two
    reapers (or a worker claiming meanwhile) never requeue or end the same run twice. A requeue sets
    ``updated_at``: a run requeued for an expired lease waits a full bound before it counts as lost.
    The caller sends each requeued step's message."""
    now = now or timezone.now()
    requeued: list[Requeue] = []
    failed: list[Ended] = []
    for run, unchanged, cause in _reapable(now):
        same = AgentRun.objects.filter(unchanged, id=run.id, next_step_index=run.next_step_index).exclude(
            status__in=TERMINAL_STATUSES
        )
        if run.requeue_count >= MAX_REQUEUES:
            message = _LIMIT_MESSAGES[cause].format(limit=MAX_REQUEUES)
            fields = finish_fields(TerminationReason.RETRIES_EXHAUSTED, code=REQUEUE_LIMIT, message=message)
            if same.update(**fields):
                failed.append(Ended(str(run.id), cause))
        elif same.update(
            lease_owner="", lease_expires_at=None, requeue_count=F("requeue_count") + 1, updated_at=now
        ):
            requeued.append(Requeue(str(run.id), run.next_step_index, cause))
    return ReapResult(requeued=tuple(requeued), failed=tuple(failed))


def _reapable(now: datetime) -> Iterator[tuple[AgentRun, Q, ReapCause]]:
    """Each run to reap, with the condition that it is still as it was read, and why. The lost runs
    are read after the expired ones are requeued (a generator), so a run is never reaped twice."""
    # Queued runs hold a lease only after a restore (:func:`runs_release_restored`).
    expired = AgentRun.objects.filter(
        status__in=(RunStatus.QUEUED, RunStatus.RUNNING), lease_expires_at__lt=now
    )
    for run in expired.only("id", "requeue_count", "next_step_index", "lease_owner"):
        yield run, Q(lease_owner=run.lease_owner, lease_expires_at__lt=now), ReapCause.LEASE_EXPIRED
    stale_before = now - timedelta(seconds=queued_stale_seconds())
    lost = AgentRun.objects.waiting().filter(updated_at__lt=stale_before)
    for run in lost.only("id", "status", "requeue_count", "next_step_index", "updated_at"):
        yield run, Q(status=run.status, lease_owner="", updated_at=run.updated_at), ReapCause.LOST


# The owner a restore gives the leases of the runs it found in flight (no worker has that name).
RESTORED_OWNER = "restored"


def runs_release_restored(*, now: datetime) -> int:
    """After a restore, hand every run that was queued or running at the backup to the reaper's next
    sweep; how many. Their leases and waits belong to workers and messages of the database before
    the restore: a lease may still look live and a wait look recent, and the broker may hold none of
    their messages. Each such run gets a lease owned by nobody that expired at ``now``, so the next
    sweep (the embedded server's as it starts, Celery beat's as it starts) requeues it at its step,
    counted like any requeue: it resumes, or ends ``retries_exhausted`` past the bound. A message of
    the old broker that arrives first claims the expired lease as usual; the sweep then finds a live
    one and leaves the run alone. Runs awaiting an approval keep waiting for it."""
    return AgentRun.objects.filter(status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).update(
        lease_owner=RESTORED_OWNER, lease_expires_at=now, updated_at=now
    )
