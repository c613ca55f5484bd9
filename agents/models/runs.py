"""Agent runs: the run, its steps, its transcript and its tool calls (DESIGN.md §7)."""

from __future__ import annotations

import uuid

from django.db import models

from agents.models.catalog import ApiClient, Configuration, LlmModel
from governance.vocabulary import DataClass, Provenance


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
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


class AgentRun(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="runs")
    api_client = models.ForeignKey(
        ApiClient, on_delete=models.PROTECT, related_name="runs", null=True, blank=True
    )
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    termination_reason = models.CharField(max_length=24, choices=TerminationReason.choices, blank=True)
    # The request, kept so a run can resume on any worker.
    input_text = models.TextField()
    input_data_class = models.CharField(max_length=32, choices=DataClass.choices)
    caller_context = models.JSONField(default=list, blank=True)  # [{name, text, data_class}]
    request_skills = models.JSONField(default=list, blank=True)  # skill identifiers
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Progress and ownership.
    next_step_index = models.PositiveIntegerField(default=0)
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    requeue_count = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    # Totals across steps (cumulative; never the context fill, which is the last step's prompt).
    prompt_tokens_total = models.PositiveBigIntegerField(default=0)
    cached_tokens_total = models.PositiveBigIntegerField(default=0)
    completion_tokens_total = models.PositiveBigIntegerField(default=0)
    last_calibration_ratio = models.FloatField(null=True, blank=True)
    error_code = models.CharField(max_length=64, blank=True)
    error_message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "lease_expires_at"])]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


class StepStatus(models.TextChoices):
    COMPLETED = "completed", "Completed"
    REFUSED = "refused", "Refused before the call"
    FAILED = "failed", "Failed"


class AgentStep(models.Model):
    """One model call and the tool calls it asked for. A completed index is never redone."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, default="model_call")
    status = models.CharField(max_length=16, choices=StepStatus.choices)
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    provider = models.CharField(max_length=100, blank=True)
    reported_prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    estimated_prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    usage_provenance = models.CharField(max_length=24, choices=Provenance.choices)
    breakdown = models.JSONField(default=dict, blank=True)
    finish_reason = models.CharField(max_length=24, blank=True)
    calibration_ratio = models.FloatField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="step_index_unique_per_run")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.index}"


class RunMessage(models.Model):
    """The transcript after the first user message: assistant turns, tool results, later user turns."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="messages")
    position = models.PositiveIntegerField()
    step_index = models.PositiveIntegerField()
    role = models.CharField(max_length=16)
    content = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)  # [{id, name, arguments}]
    tool_call_id = models.CharField(max_length=200, blank=True)
    tool_name = models.CharField(max_length=100, blank=True)
    data_class = models.CharField(max_length=32, choices=DataClass.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="message_position_unique")]

    def __str__(self) -> str:
        return f"{self.run_id}@{self.position} {self.role}"


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


class ToolSetting(models.Model):
    """Switch a registered tool off installation-wide. A tool without a row is enabled."""

    name = models.CharField(max_length=100, unique=True)
    is_enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
