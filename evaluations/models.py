"""Evaluation sets and their evaluations (docs/decisions/0025-evaluating-drafts.md).

An :class:`EvaluationCase` is a sample request an editor keeps for a configuration: its input and
optional caller context, classified by one data class like any task input, and optional expectations
of the answer. An :class:`Evaluation` runs a configuration's cases through the governed send twice,
live and live + the pending drafts, and keeps one :class:`EvaluationResult` per case and side with the
content versions it used, so it stays readable after the drafts are published.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models

from catalog.models.catalog import LlmModel
from catalog.models.configurations import Configuration
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS
from evaluations.check_rules import json_object, json_schema_valid, pattern_valid
from governance.vocabulary import DataClass

JUDGE_SCALE = 10
JUDGE_DEFAULT_MIN = 7


class EvaluationCase(models.Model):
    """One sample request of a configuration's evaluation set. Its input and caller context are sent
    as the task input and one caller context item, both of ``data_class``: a case above a model's zone
    is refused like any send."""

    configuration = models.ForeignKey(
        Configuration, on_delete=models.CASCADE, related_name="evaluation_cases"
    )
    name = models.CharField(max_length=200)
    input = models.TextField(help_text="The task input, sent as the user's message.")
    caller_context = models.TextField(
        blank=True, help_text="Optional caller context, sent as one context item named 'context'."
    )
    data_class = models.CharField(
        max_length=32,
        choices=DataClass.choices,
        help_text="The class of the input and the caller context; a model whose zone does not accept it "
        "is refused the case.",
    )
    must_contain = models.CharField(
        max_length=500, blank=True, help_text="The answer must contain this text (case-insensitive)."
    )
    must_not_contain = models.CharField(
        max_length=500, blank=True, help_text="The answer must not contain this text (case-insensitive)."
    )
    max_tokens = models.PositiveIntegerField(
        null=True, blank=True, help_text="The answer may take at most this many tokens."
    )
    must_be_permitted = models.BooleanField(
        default=False, help_text="Governance must permit the send (a refusal fails the case)."
    )
    must_match = models.CharField(
        max_length=500,
        blank=True,
        default="",
        db_default="",
        validators=[pattern_valid],
        help_text="The answer must match this regular expression (Python syntax, searched anywhere).",
    )
    must_be_valid_json = models.JSONField(
        null=True,
        blank=True,
        validators=[json_schema_valid],
        help_text="The answer must be JSON valid against this JSON schema ({} for any JSON).",
    )
    must_call_tool = models.CharField(
        max_length=100, blank=True, default="", db_default="", help_text="The answer must call this tool."
    )
    tool_arguments_match = models.JSONField(
        default=dict,
        blank=True,
        db_default={},
        validators=[json_object],
        help_text="…with arguments holding these keys and values (a JSON object; {}: any arguments).",
    )
    judge = models.ForeignKey(
        Configuration,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="A configuration that scores the answer against the rubric, through the same governed "
        "call: its zone must admit the case's class and the answer's label, or the check is refused.",
    )
    judge_rubric = models.TextField(
        blank=True, default="", db_default="", help_text="What the judge scores the answer against."
    )
    judge_min_score = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(JUDGE_SCALE)],
        help_text=f"The judge's score (0 to {JUDGE_SCALE}) must be at least this (default {JUDGE_DEFAULT_MIN}).",
    )
    position = models.PositiveSmallIntegerField(default=0)
    # Where the case came from when it was made from production ("run <id>"); empty: written by hand.
    source = models.CharField(max_length=100, blank=True, editable=False, default="", db_default="")

    class Meta:
        db_table = "agents_evaluationcase"  # kept from before the split (decision 0031)
        ordering = ["configuration", "position", "name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["configuration", "name"], name="evaluation_case_unique_name"),
            models.CheckConstraint(
                condition=models.Q(data_class__in=DataClass.values), name="evaluation_case_data_class"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.configuration.identifier}: {self.name}"

    def clean(self) -> None:
        if self.judge_id is not None and not self.judge_rubric.strip():
            raise ValidationError({"judge_rubric": "A judge needs a rubric to score against."})
        if self.tool_arguments_match and not self.must_call_tool:
            raise ValidationError({"must_call_tool": "Name the tool whose arguments are to match."})


class EvaluationStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    FAILED = "failed", "Failed"


class EvaluationSide(models.TextChoices):
    """Which side of an evaluation a result is on. An evaluation has either the sides live and live +
    drafts, or two published versions of its configuration: baseline and candidate."""

    LIVE = "live", "Live"
    DRAFTED = "drafted", "Live + drafts"
    BASELINE = "baseline", "Baseline version"
    CANDIDATE = "candidate", "Candidate version"


# The side an evaluation compares against: its results never decide whether it passed.
REFERENCE_SIDES = frozenset({EvaluationSide.LIVE, EvaluationSide.BASELINE})


class ResultOutcome(models.TextChoices):
    ANSWERED = "answered", "Answered"
    REFUSED = "refused", "Refused by governance"
    OVERFLOW = "overflow", "Over the window"
    FAILED = "failed", "Provider failed"


class Evaluation(models.Model):
    """One run of a configuration's evaluation set, live and live + drafts, on ``model``.

    ``drafts`` lists the drafts applied on the drafted side: kind, identifier, row id and the digest of
    the draft's values (a draft edited later is a different draft). ``pins`` are the live versions both
    sides started from (agents/runtime/pins.py). Comparing two published versions instead, ``pins`` are
    the baseline's and ``candidate_pins`` the candidate's, and no draft is applied. ``passed``: every
    case held every expectation on the drafted (or candidate) side; None until finished. ``cases``: the
    ids of the cases it sends, taken at its start."""

    configuration = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="evaluations")
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(
        max_length=16, choices=EvaluationStatus.choices, default=EvaluationStatus.QUEUED
    )
    started_by = models.CharField(max_length=200)
    drafts = models.JSONField(default=list, blank=True)
    cases = models.JSONField(default=list, blank=True)  # the ids of the cases at the start, in order
    # While running: until when the task that claimed it holds it (renewed by every result it stores).
    lease_until = models.DateTimeField(null=True, blank=True)
    pins = models.JSONField(default=list, blank=True)
    # Set when two published versions are compared: the candidate's pins; ``pins`` are the baseline's.
    candidate_pins = models.JSONField(default=list, blank=True, db_default=[])
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    passed = models.BooleanField(null=True, blank=True)
    # Cases that held every expectation on the reference side and not on the other; None until finished.
    regressions = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When its results' content (inputs, answers) was purged past RETENTION_EVALUATION_RESULTS_DAYS
    # (evaluations/retention.py); verdicts, usage and receipts stay.
    content_purged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "agents_evaluation"  # kept from before the split (decision 0031)
        ordering = ["-created_at", "-id"]
        permissions = [("run_evaluation", "Can run an evaluation of a configuration")]

    def __str__(self) -> str:
        return f"evaluation {self.pk} of {self.configuration.identifier}"

    @property
    def finished(self) -> bool:
        return self.status in (EvaluationStatus.FINISHED, EvaluationStatus.FAILED)

    @property
    def compares_versions(self) -> bool:
        return bool(self.candidate_pins)

    @property
    def sides(self) -> tuple[EvaluationSide, EvaluationSide]:
        """The reference side, then the side compared with it."""
        if self.compares_versions:
            return EvaluationSide.BASELINE, EvaluationSide.CANDIDATE
        return EvaluationSide.LIVE, EvaluationSide.DRAFTED

    def applied(self, kind: str, object_id: str, digest: str) -> bool:
        """Whether the drafted side applied the draft of row ``kind``/``object_id`` with ``digest``."""
        return any(
            (item.get("kind"), str(item.get("object_id")), item.get("digest")) == (kind, object_id, digest)
            for item in self.drafts
        )


class EvaluationResult(models.Model):
    """One case on one side: the (redacted) answer, the fit's breakdown, cost, latency, the decision
    with the answer's receipt, and each expectation with whether it held. The case's name is kept, so
    a result stays readable when the case is changed or deleted."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="results")
    case = models.ForeignKey(EvaluationCase, on_delete=models.SET_NULL, null=True, related_name="+")
    case_name = models.CharField(max_length=200)
    case_input = models.TextField(blank=True)  # the input as sent (the case may change later)
    case_data_class = models.CharField(max_length=32, blank=True)
    position = models.PositiveSmallIntegerField()
    side = models.CharField(max_length=16, choices=EvaluationSide.choices)
    outcome = models.CharField(max_length=16, choices=ResultOutcome.choices)
    answer = models.TextField(blank=True)
    message = models.TextField(blank=True)  # why nothing was answered (a refusal, a failure)
    breakdown = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(
        max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, null=True, blank=True
    )
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    decision = models.JSONField(default=dict, blank=True)
    receipt = models.JSONField(default=dict, blank=True)
    tool_calls = models.JSONField(default=list, blank=True, db_default=[])  # [{"name", "arguments"}]
    checks = models.JSONField(default=list, blank=True)  # [{"expectation", "held"}, judges with more]
    passed = models.BooleanField()

    class Meta:
        db_table = "agents_evaluationresult"  # kept from before the split (decision 0031)
        ordering = ["evaluation", "position", "side"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "position", "side"], name="evaluation_result_once"),
        ]

    def __str__(self) -> str:
        return f"{self.case_name} ({self.side})"

    @property
    def window_fill(self) -> float | None:
        """Percent of the window the sent context took (our estimate of what was sent)."""
        breakdown: dict[str, Any] = self.breakdown or {}
        window, estimated = breakdown.get("window"), breakdown.get("estimated")
        if not window or estimated is None:
            return None
        return 100 * int(estimated) / int(window)
