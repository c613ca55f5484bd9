"""A run's tool calls, each claimed before its tool runs (agents/runtime/tool_calls.py)."""

from __future__ import annotations

from typing import Any

from django.db import connections, models

from agents.models.runs import AgentRun
from catalog.models.sql import Table, statement_text


class ToolCallStatus(models.TextChoices):
    STARTED = "started", "Started"
    COMPLETED = "completed", "Completed"
    DENIED = "denied", "Denied"
    FAILED = "failed", "Failed"


class ToolCallRecordQuerySet(models.QuerySet["ToolCallRecord"]):
    def status_set_sql(self, *, run_id: object, call_id: str, status: str) -> tuple[str, list[Any]]:
        """``filter(run_id=run_id, call_id=call_id).update(status=status)`` as an ``UPDATE`` of SQL text
        and its parameters, not run: it goes into the statement that stores the call's result
        (``agents/runtime/held_writes.py``), so its text ends with its ``WHERE`` clause."""
        connection = connections[self.db]
        table = Table(self.model, connection)
        sql = statement_text(
            connection,
            "tool_call_status_set",
            lambda: (
                f"UPDATE {table.name} SET {table.column('status')} = %s "
                f"WHERE {table['run']} = %s AND {table['call_id']} = %s"
            ),
        )
        return sql, [table.value("status", status), table.value("run", run_id), call_id]


class ToolCallRecord(models.Model):
    """Claimed before a tool runs, so a non-idempotent write is never replayed after a crash."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="tool_calls")
    step_index = models.PositiveIntegerField()
    call_id = models.CharField(max_length=200)
    tool_name = models.CharField(max_length=100)
    effect = models.CharField(max_length=24)
    status = models.CharField(max_length=16, choices=ToolCallStatus.choices)
    attempts = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ToolCallRecordQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "call_id"], name="tool_call_unique_per_run")]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.call_id})"
