"""What completions consumed: one row per completion served, for cost reports (runs keep theirs on
their steps). Figures and identifiers only, never content."""

from __future__ import annotations

from django.db import models

from catalog.models.catalog import LlmModel
from catalog.models.clients import ApiClient
from catalog.models.configurations import Configuration
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS
from governance.vocabulary import DataClass


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
    # The answer's label as delivered to the client (empty: abandoned before its finish, or older).
    label = models.CharField(max_length=32, choices=DataClass.choices, blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "agents_completionrecord"  # kept from before the split (decision 0031)
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"completion {self.request_id}"
