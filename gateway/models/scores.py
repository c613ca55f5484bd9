"""Scores consumer apps give the answers they received (docs/decisions/0038-scores-datasets-judges.md).

A score names one answer the scoring client received: a completion (by its ``request_id``) or a run
(by its id). It keeps that answer's label as it was delivered to the client, the configuration and
the configuration's published version the answer came from, so editors read scores per configuration
and per version over time. The comment is the client's free text, stored redacted as every stored
row is; the value is a number, a yes/no or a category, as ``kind`` says.
"""

from __future__ import annotations

from django.db import models

from agents.models import AgentRun
from catalog.models.clients import ApiClient
from catalog.models.configurations import Configuration
from gateway.models.usage import CompletionRecord
from governance.vocabulary import DataClass

NAME_MAX = 64
CATEGORY_MAX = 64
COMMENT_MAX = 1000


class ScoreKind(models.TextChoices):
    NUMERIC = "numeric", "Number"
    BOOLEAN = "boolean", "Yes/no"
    CATEGORY = "category", "Category"


class Score(models.Model):
    """One client's score of one answer it received. Exactly one of ``completion`` and ``run`` is set,
    and exactly the value field ``kind`` names (check constraints)."""

    api_client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="scores")
    completion = models.ForeignKey(
        CompletionRecord, on_delete=models.CASCADE, null=True, blank=True, related_name="scores"
    )
    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, null=True, blank=True, related_name="scores")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="scores")
    # The configuration's history id the answer was built from (its published version); None: unknown.
    configuration_version = models.PositiveIntegerField(null=True, blank=True)
    # The answer's label as delivered to the client (the class of what it was derived from).
    label = models.CharField(max_length=32, choices=DataClass.choices)
    name = models.SlugField(max_length=NAME_MAX, default="overall")
    kind = models.CharField(max_length=16, choices=ScoreKind.choices)
    numeric_value = models.FloatField(null=True, blank=True)
    boolean_value = models.BooleanField(null=True, blank=True)
    category_value = models.CharField(max_length=CATEGORY_MAX, blank=True)
    comment = models.TextField(blank=True, max_length=COMMENT_MAX)  # redacted
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(completion__isnull=False, run__isnull=True)
                | models.Q(completion__isnull=True, run__isnull=False),
                name="score_of_one_answer",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    kind=ScoreKind.NUMERIC, numeric_value__isnull=False, boolean_value__isnull=True
                )
                | models.Q(kind=ScoreKind.BOOLEAN, boolean_value__isnull=False, numeric_value__isnull=True)
                | models.Q(kind=ScoreKind.CATEGORY, numeric_value__isnull=True, boolean_value__isnull=True)
                & ~models.Q(category_value=""),
                name="score_value_of_its_kind",
            ),
            models.CheckConstraint(condition=models.Q(label__in=DataClass.values), name="score_label"),
        ]
        indexes = [models.Index(fields=["configuration", "created_at"], name="score_by_configuration")]

    def __str__(self) -> str:
        return f"{self.name} {self.value_label} on {self.answer_id}"

    @property
    def answer_id(self) -> str:
        return f"run {self.run_id}" if self.run_id else f"completion {self.completion_id}"

    @property
    def value_label(self) -> str:
        if self.kind == ScoreKind.NUMERIC:
            return f"{self.numeric_value:g}"
        if self.kind == ScoreKind.BOOLEAN:
            return "yes" if self.boolean_value else "no"
        return self.category_value

    @property
    def chart_value(self) -> float | None:
        """The value on a chart's axis: a number as it is, yes 1 and no 0; a category has none."""
        if self.kind == ScoreKind.NUMERIC:
            return self.numeric_value
        if self.kind == ScoreKind.BOOLEAN:
            return 1.0 if self.boolean_value else 0.0
        return None
