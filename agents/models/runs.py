"""Agent runs: the run and its claim (docs/architecture.md); its steps and its transcript are in
``steps.py``, its tool calls in ``tool_calls.py``."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connections, models
from django.db.backends.base.base import BaseDatabaseWrapper

from catalog.models.catalog import CATALOG_VERSION_ID, CatalogVersion
from catalog.models.clients import ApiClient
from catalog.models.configurations import Configuration
from catalog.models.sql import Read, Table, converted_row, executed, statement_cursor, statement_text
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS
from governance.vocabulary import DataClass, TrustZone


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    # Paused on a tool call that waits for a decision (agents/runtime/approvals.py); no lease held.
    AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


TERMINAL_STATUSES = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)


class TerminationReason(models.TextChoices):
    COMPLETED = "completed", "Completed"
    MAX_ITERATIONS = "max_iterations", "Max iterations"
    CONTEXT_TRUNCATED = "context_truncated", "Context does not fit"
    POLICY_DENIED = "policy_denied", "Refused by governance"
    PROVIDER_FAILED = "provider_failed", "Provider failed"
    CANCELLED = "cancelled", "Cancelled"
    RETRIES_EXHAUSTED = "retries_exhausted", "Retries exhausted"
    INTERNAL_ERROR = "internal_error", "Internal error"
    BUDGET_EXHAUSTED = "budget_exhausted", "Client's daily budget exhausted"


@dataclass(frozen=True)
class RunClaim:
    """What a claim read, in the statement that took the lease (so all of it in one snapshot)."""

    run: AgentRun  # the row as updated; its API client, if any, loaded with its name only
    catalog_token: str | None  # None when the catalogue token row is missing
    model_calibration_factor: float  # of the configuration's serving model
    model_calibration_samples: int
    step_status: str | None  # the status of a step already recorded at this index, if any
    messages: int  # the run's stored messages (its transcript holds positions 0 to messages - 1)


class AgentRunQuerySet(models.QuerySet["AgentRun"]):
    def waiting(self) -> AgentRunQuerySet:
        """Runs waiting for a worker: queued, or running between two steps (no lease). Their
        ``updated_at`` is when the wait began (run creation, the last step's release, a requeue)."""
        return self.filter(
            models.Q(status=RunStatus.QUEUED) | models.Q(status=RunStatus.RUNNING, lease_owner="")
        )

    def claim(
        self, *, run_id: str | uuid.UUID, step_index: int, worker: str, now: datetime, expires_at: datetime
    ) -> RunClaim | None:
        """Take the lease on step ``step_index`` of run ``run_id`` for ``worker`` until ``expires_at``
        and mark the run running, if the run is at that step, not finished, and its lease is free,
        expired or already ``worker``'s. None when any of that does not hold.

        One ``UPDATE … RETURNING`` statement (PostgreSQL, SQLite ≥ 3.35) returns the claimed row
        with what a step needs next (:func:`_claim_reads`), so a step starts with one round trip.
        """
        connection = connections[self.db]
        claim = _claim_statement(connection)
        run = Table(self.model, connection)
        params: list[Any] = [
            run.value("status", RunStatus.RUNNING.value),
            worker,
            run.value("lease_expires_at", expires_at),
            run.value("updated_at", now),
            run.value("pk", uuid.UUID(str(run_id))),
            step_index,
            *claim.terminal_params,
            run.value("lease_expires_at", now),
            worker,
            *(step_index if param is STEP_INDEX else param for param in claim.read_params),
        ]
        with statement_cursor(connection) as cursor:
            row = executed(cursor, claim.sql, params).fetchone()
        return None if row is None else self._claimed(connection, claim, row)

    def totals_add(
        self,
        *,
        run_id: str | uuid.UUID,
        added: Mapping[str, int | Decimal],
        values: Mapping[str, object],
        lease_owner: str | None = None,
        step_index: int | None = None,
    ) -> int:
        """Add ``added`` (field: amount, counted in the statement, so concurrent writers lose nothing)
        to run ``run_id``'s counters and set ``values`` (field: value); with ``lease_owner``, only while
        the run is unfinished and that worker holds its lease (with ``step_index``, at that step).
        Returns the rows updated (0 or 1).

        The same statement as ``filter(...).update(field=F(field) + amount, ...)`` in one ``UPDATE``
        of SQL text (:meth:`totals_add_sql`): a step adds its usage once, and compiling the ORM's
        expressions cost more than the statement (``catalog/models/sql.py``)."""
        connection = connections[self.db]
        sql, params = self.totals_add_sql(
            run_id=run_id, added=added, values=values, lease_owner=lease_owner, step_index=step_index
        )
        with statement_cursor(connection) as cursor:
            return int(executed(cursor, sql, params).rowcount)

    def totals_add_sql(
        self,
        *,
        run_id: str | uuid.UUID,
        added: Mapping[str, int | Decimal],
        values: Mapping[str, object],
        lease_owner: str | None = None,
        step_index: int | None = None,
    ) -> tuple[str, list[Any]]:
        """:meth:`totals_add`'s ``UPDATE`` and its parameters, not run (its text ends with its
        ``WHERE`` clause, so a statement may embed it: ``agents/runtime/held_writes.py``)."""
        connection = connections[self.db]
        run = Table(self.model, connection)
        decimals = tuple(isinstance(amount, Decimal) for amount in added.values())
        shape = (
            "totals_add",
            tuple(added),
            decimals,
            tuple(values),
            lease_owner is not None,
            step_index is not None,
        )
        sql = statement_text(
            connection,
            shape,
            lambda: _totals_add_text(
                run, added, values, with_owner=lease_owner is not None, with_step=step_index is not None
            ),
        )
        params: list[Any] = [run.value(name, amount) for name, amount in added.items()]
        params += [run.value(name, value) for name, value in values.items()]
        params.append(run.value("pk", uuid.UUID(str(run_id))))
        if lease_owner is not None:
            params += [*(status.value for status in TERMINAL_STATUSES), lease_owner]
        if step_index is not None:
            params.append(step_index)
        return sql, params

    def _claimed(
        self, connection: BaseDatabaseWrapper, claim: ClaimStatement, row: tuple[Any, ...]
    ) -> RunClaim:
        columns = len(claim.run_attnames)
        values = converted_row(connection, self.db, claim.fields, row)
        claimed = self.model.from_db(self.db, claim.run_attnames, values[:columns])
        token, factor, samples, client_name, step_status, last_position = values[columns:]
        if claimed.api_client_id is not None and client_name is not None:
            claimed.api_client = ApiClient.from_db(
                self.db, ["id", "name"], [claimed.api_client_id, client_name]
            )
        return RunClaim(
            run=claimed,
            catalog_token=token,
            model_calibration_factor=float(factor),
            model_calibration_samples=int(samples),
            step_status=step_status,
            messages=0 if last_position is None else last_position + 1,
        )


def _totals_add_text(
    run: Table,
    added: Mapping[str, int | Decimal],
    values: Mapping[str, object],
    *,
    with_owner: bool,
    with_step: bool,
) -> str:
    """:meth:`AgentRunQuerySet.totals_add_sql`'s text: each of ``added`` added to its counter (a
    decimal as the ORM renders a decimal sum on each backend), each of ``values`` set, on the run's
    primary key, then, ``with_owner``, unfinished and leased by an owner, ``with_step``, at a step."""
    sqlite = run.connection.vendor == "sqlite"
    assignments: list[str] = []
    for name, amount in added.items():
        if isinstance(amount, Decimal) and sqlite:
            total = f"CAST(({run[name]} + (CAST(%s AS NUMERIC))) AS NUMERIC)"
        else:
            total = f"({run[name]} + %s)"
        assignments.append(f"{run.column(name)} = {total}")
    assignments += [f"{run.column(name)} = %s" for name in values]
    sql = f"UPDATE {run.name} SET {', '.join(assignments)} WHERE {run['pk']} = %s"
    if with_owner:
        terminal = ", ".join(["%s"] * len(TERMINAL_STATUSES))
        sql += f" AND {run['status']} NOT IN ({terminal}) AND {run['lease_owner']} = %s"
    if with_step:
        sql += f" AND {run['next_step_index']} = %s"
    return sql


# In a claim's reads, the parameter that stands for the claimed step's index.
STEP_INDEX = object()


@dataclass(frozen=True)
class ClaimStatement:
    """The claim's ``UPDATE … RETURNING`` on one database vendor, built once per process (its text and
    what it returns do not change from one claim to the next; building them cost more than a quarter
    of the claim): its text, the fields of the row it returns (the run's columns, then each of
    :func:`_claim_reads`), the run's attribute names, and the parameters of its terminal statuses
    and of its reads (:data:`STEP_INDEX` for the claimed step's index)."""

    sql: str
    fields: tuple[models.Field[Any, Any], ...]
    run_attnames: list[str]
    terminal_params: tuple[object, ...]
    read_params: tuple[object, ...]


def _claim_statement(connection: BaseDatabaseWrapper) -> ClaimStatement:
    claim = _CLAIM_STATEMENTS.get(connection.vendor)
    if claim is None:
        claim = _CLAIM_STATEMENTS.setdefault(connection.vendor, _claim_built(connection))
    return claim


def _claim_built(connection: BaseDatabaseWrapper) -> ClaimStatement:
    run = Table(AgentRun, connection)
    reads = _claim_reads(run)
    owner, expires, status = (
        run.column("lease_owner"),
        run.column("lease_expires_at"),
        run.column("status"),
    )
    terminal = ", ".join(["%s"] * len(TERMINAL_STATUSES))
    sql = (
        f"UPDATE {run.name} SET {status} = %s, {owner} = %s, {expires} = %s, "
        f"{run.column('updated_at')} = %s WHERE {run.column('pk')} = %s "
        f"AND {run.column('next_step_index')} = %s AND {status} NOT IN ({terminal}) "
        f"AND ({expires} IS NULL OR {expires} < %s OR {owner} = %s) "
        f"RETURNING {run.columns()}, {', '.join(read.sql for read in reads)}"
    )
    fields = run.fields()
    return ClaimStatement(
        sql=sql,
        fields=(*fields, *(read.field for read in reads)),
        run_attnames=[field.attname for field in fields],
        terminal_params=tuple(run.value("status", value.value) for value in TERMINAL_STATUSES),
        read_params=tuple(param for read in reads for param in read.params),
    )


# The claim statement by database vendor, as :class:`catalog.models.sql.Statement` keeps its text.
_CLAIM_STATEMENTS: dict[str, ClaimStatement] = {}


def _claim_reads(run: Table) -> tuple[Read, ...]:
    """What the claim returns beside the run's columns, each a scalar subquery over the updated row:
    the catalogue token (the worker's cache of the configuration is valid under it), the serving
    model's calibration factor and samples, the API client's name, the status of a step already
    recorded at the claimed index (:data:`STEP_INDEX`), and the position of the run's last message
    (the unique index on run and position answers it from one entry)."""
    version = Table(CatalogVersion, run.connection)
    configuration = run.related("configuration")
    model, client, step = configuration.related("model"), run.related("api_client"), run.related("steps")
    message = run.related("messages")
    serving_model = (
        f"FROM {model.name} JOIN {configuration.name} ON {configuration['model']} = {model['pk']} "
        f"WHERE {configuration['pk']} = {run['configuration']}"
    )
    return (
        Read(
            version.field("token"),
            f"(SELECT {version['token']} FROM {version.name} WHERE {version['pk']} = %s)",
            (CATALOG_VERSION_ID,),
        ),
        Read(model.field("calibration_factor"), f"(SELECT {model['calibration_factor']} {serving_model})"),
        Read(model.field("calibration_samples"), f"(SELECT {model['calibration_samples']} {serving_model})"),
        Read(
            client.field("name"),
            f"(SELECT {client['name']} FROM {client.name} WHERE {client['pk']} = {run['api_client']})",
        ),
        Read(
            step.field("status"),
            f"(SELECT {step['status']} FROM {step.name} "
            f"WHERE {step['run']} = {run['pk']} AND {step['index']} = %s)",
            (STEP_INDEX,),
        ),
        Read(
            message.field("position"),
            f"(SELECT MAX({message['position']}) FROM {message.name} WHERE {message['run']} = {run['pk']})",
        ),
    )


class AgentRun(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="runs")
    api_client = models.ForeignKey(
        ApiClient,
        on_delete=models.PROTECT,
        related_name="runs",
        null=True,
        blank=True,
        verbose_name="API client",
    )
    status = models.CharField(max_length=24, choices=RunStatus.choices, default=RunStatus.QUEUED)
    termination_reason = models.CharField(max_length=24, choices=TerminationReason.choices, blank=True)
    # The request, kept so a run can resume on any worker.
    input_text = models.TextField()
    input_data_class = models.CharField(max_length=32, choices=DataClass.choices)
    caller_context = models.JSONField(default=list, blank=True)  # [{name, text, data_class[, identifier]}]
    # A run started with messages (agents/runtime/conversation.py), stored redacted: {"task_input":
    # identifier, "task_input_media": [its images and PDFs: agents/runtime/run_media.py],
    # "system_override": [items], "transcript": [messages with data_class and identifier]};
    # the caller's messages after the task, sent before the run's own transcript. Empty for an input.
    conversation = models.JSONField(default=dict, blank=True)
    request_skills = models.JSONField(default=list, blank=True)  # skill identifiers
    # Who the run's answers are for (its receiver): the client's zone when it was started, else the zone
    # its operator named. Every step is gated for it; unknown reads as external_global.
    receiver_zone = models.CharField(
        max_length=32, choices=TrustZone.choices, default=TrustZone.EXTERNAL_GLOBAL
    )
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    # The content versions the run started with, in the order they are assembled:
    # [{kind, identifier, id, history_id}] (agents/runtime/pins.py). Empty: a run from before pinning.
    pins = models.JSONField(default=list, blank=True)
    # Progress and ownership.
    next_step_index = models.PositiveIntegerField(default=0)
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    requeue_count = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    # Totals across steps (cumulative; never the context fill, which is the last step's prompt).
    prompt_tokens_total = models.PositiveBigIntegerField(default=0)
    cached_tokens_total = models.PositiveBigIntegerField(default=0)
    cache_write_tokens_total = models.PositiveBigIntegerField(default=0)
    completion_tokens_total = models.PositiveBigIntegerField(default=0)
    cost_total = models.DecimalField(
        max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, default=Decimal(0)
    )
    last_calibration_ratio = models.FloatField(null=True, blank=True)
    error_code = models.CharField(max_length=64, blank=True)
    error_message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When its content (request, transcript) was purged past RETENTION_RUN_TRANSCRIPTS_DAYS
    # (agents/services/retention.py); its steps, receipts and governance events stay.
    content_purged_at = models.DateTimeField(null=True, blank=True)

    objects = AgentRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "lease_expires_at"])]

    def __str__(self) -> str:
        return f"run {self.id}"  # its status is a field of its own (the admin's run page shows it once)

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES
