"""A run's tool calls, each claimed before its tool runs (agents/runtime/tool_calls.py)."""

from __future__ import annotations

from django.db import models

from agents.models.runs import AgentRun


class ToolCallStatus(models.TextChoices):
    STARTED = "started", "Started"
    COMPLETED = "completed", "Completed"
    DENIED = "denied", "Denied"
    FAILED = "failed", "Failed"


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

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "call_id"], name="tool_call_unique_per_run")]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.call_id})"
