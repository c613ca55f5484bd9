"""A tool call waiting for a person's decision (agents/runtime/approvals.py)."""

from __future__ import annotations

import uuid

from django.db import models

from agents.models.runs import AgentRun
from governance.vocabulary import DataClass

MAX_REASON_CHARS = 500


class ApprovalDecision(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"
    DENIED = "denied", "Denied"
    EXPIRED = "expired", "Expired"


class ToolApproval(models.Model):
    """One call of a tool that requires approval, asked for by a step's assistant turn.

    ``arguments`` are stored redacted. ``label`` is the assistant turn's label for the run's receiver:
    the arguments were derived from what that turn was, so a reader sees them only where it may read
    the turn. ``decision`` moves once, from ``pending`` to one of the others."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="approvals")
    step_index = models.PositiveIntegerField()
    call_id = models.CharField(max_length=200)
    tool_name = models.CharField(max_length=100)
    arguments = models.TextField(blank=True)
    label = models.CharField(max_length=32, choices=DataClass.choices)
    tool_class = models.CharField(max_length=32, choices=DataClass.choices)
    # Asked for because the call acts on the world and untrusted content was in the step's context
    # (not because the tool always asks): the untrusted sources, named for the approver
    # (``kind:identifier``, a tool result with its tool), never their content.
    untrusted_context = models.BooleanField(default=False, db_default=False)
    untrusted_sources = models.JSONField(default=list, blank=True, db_default=[])
    decision = models.CharField(
        max_length=16, choices=ApprovalDecision.choices, default=ApprovalDecision.PENDING
    )
    decided_by = models.CharField(max_length=150, blank=True)
    reason = models.CharField(max_length=MAX_REASON_CHARS, blank=True)
    requested_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["requested_at"]
        constraints = [models.UniqueConstraint(fields=["run", "call_id"], name="approval_unique_per_call")]
        indexes = [models.Index(fields=["decision", "expires_at"])]
        permissions = [("decide_toolapproval", "Can approve or deny a tool call")]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.call_id}): {self.decision}"

    @property
    def is_pending(self) -> bool:
        return self.decision == ApprovalDecision.PENDING
