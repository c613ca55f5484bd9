"""What completions consumed: one row per completion served, for cost reports (runs keep theirs on
their steps). Figures and identifiers only, never content."""

from __future__ import annotations

from django.db import models

from agents.models.catalog import ApiClient, Configuration, LlmModel
from agents.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS


class CompletionRecord(models.Model):
    """One served completion: who asked, for which configuration, which model served it, its
    provider-reported usage (None: not reported) and its cost from that model's prices."""

    request_id = models.CharField(max_length=32, unique=True)
    api_client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="completions")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="completions")
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, related_name="+")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    cache_write_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(
        max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"completion {self.request_id}"


def _cost_field() -> models.DecimalField:
    return models.DecimalField(max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, default=0)


class ClientDailyUsage(models.Model):
    """What one client spent and holds on one UTC day (agents/runtime/budget.py): ``*_used`` is
    settled (provider-reported) consumption, ``*_reserved`` what sends in flight hold. Moved only by
    single conditional ``UPDATE`` statements, never read-modify-write."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="daily_usage")
    day = models.DateField()
    tokens_used = models.BigIntegerField(default=0)
    tokens_reserved = models.BigIntegerField(default=0)
    cost_used = _cost_field()
    cost_reserved = _cost_field()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-day", "client"]
        verbose_name_plural = "client daily usage"
        constraints = [
            models.UniqueConstraint(fields=["client", "day"], name="client_daily_usage_unique_day"),
            # A reservation released or settled twice would drive these below zero: refused.
            models.CheckConstraint(
                condition=models.Q(tokens_reserved__gte=0, cost_reserved__gte=0, tokens_used__gte=0),
                name="client_daily_usage_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.client_id} on {self.day}"
