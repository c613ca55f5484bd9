"""A run's steps and its transcript (docs/architecture.md): each model call or compaction, and the
messages after the first user message."""

from __future__ import annotations

from django.db import models

from agents.models.runs import AgentRun
from catalog.models.catalog import LlmModel
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS
from governance.vocabulary import DataClass, Integrity, Provenance


class StepStatus(models.TextChoices):
    COMPLETED = "completed", "Completed"
    REFUSED = "refused", "Refused before the call"
    FAILED = "failed", "Failed"


class StepKind(models.TextChoices):
    MODEL_CALL = "model_call", "Model call"
    COMPACTION = "compaction", "Compaction"


class AgentStep(models.Model):
    """One model call and the tool calls it asked for, or a compaction of the run's transcript
    (agents/runtime/compaction.py). A completed index is never redone."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=StepKind.choices, default=StepKind.MODEL_CALL)
    status = models.CharField(max_length=16, choices=StepStatus.choices)
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    provider = models.CharField(max_length=100, blank=True)
    reported_prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    estimated_prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)  # prompt tokens read from cache
    cache_write_tokens = models.PositiveIntegerField(null=True, blank=True)  # written to it (Anthropic)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    # From the serving model's prices and the reported usage (catalog/pricing.py); None: not reported.
    cost = models.DecimalField(
        max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, null=True, blank=True
    )
    usage_provenance = models.CharField(max_length=24, choices=Provenance.choices)
    breakdown = models.JSONField(default=dict, blank=True)
    # The window of the model the figures belong to (the one that served, else the serving model),
    # as it was at the step: the step's context usage is read against it.
    context_window = models.PositiveIntegerField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)  # the reply limit sent
    max_tokens_clamped = models.BooleanField(
        default=False
    )  # the run's max_tokens was above the model's limit
    # Targets not sent the call because it could not fit them: [{provider, model, reason, estimated,
    # budget, window}] (figures only).
    skipped_targets = models.JSONField(default=list, blank=True)
    # The pinned content versions this step's context was built from: [{kind, identifier, id, history_id}].
    pins = models.JSONField(default=list, blank=True)
    finish_reason = models.CharField(max_length=24, blank=True)
    calibration_ratio = models.FloatField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True)
    # The reply's label (the most sensitive class it was derived from) and its label for the run's
    # receiver (what the receiver did not supply itself); blank for a step that sent nothing.
    label = models.CharField(max_length=32, choices=DataClass.choices, blank=True)
    receiver_label = models.CharField(max_length=32, choices=DataClass.choices, blank=True)
    # The least trusted integrity level of what the reply was derived from (blank: sent nothing).
    integrity = models.CharField(
        max_length=16, choices=Integrity.choices, blank=True, default="", db_default=""
    )
    receipt = models.JSONField(default=dict, blank=True)  # content-free (agents/runtime/receipts.py)
    # A compaction step's record (agents/runtime/compaction.py): strategy, what it replaced and, for a
    # summary, its text (redacted; shown only to a reader its receiver label admits). Empty otherwise.
    compaction = models.JSONField(default=dict, blank=True)
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
    # A tool result: its tool's class. An assistant turn: its reply's label, and in
    # ``receiver_class`` its label for the run's receiver.
    data_class = models.CharField(max_length=32, choices=DataClass.choices, blank=True)
    receiver_class = models.CharField(max_length=32, choices=DataClass.choices, blank=True)
    label_observed = models.BooleanField(default=False)  # the label came from a row sent under observe
    # A tool result: trusted for a tool declared trusted, else untrusted. An assistant turn: its step's.
    # Blank (a row from before levels were kept) reads as untrusted.
    integrity = models.CharField(
        max_length=16, choices=Integrity.choices, blank=True, default="", db_default=""
    )
    # An untrusted tool result: the injection rules its screening found, comma-separated (a signal only).
    screening = models.CharField(max_length=300, blank=True, default="", db_default="")
    quarantined = models.TextField(blank=True, default="", db_default="")  # a held result (quarantine.py)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="message_position_unique")]

    def __str__(self) -> str:
        return f"{self.run_id}@{self.position} {self.role}"
