"""API clients: the consumer apps that call the API, each a receiver in its trust zone."""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models

from catalog.models.catalog import InTrustZone
from catalog.models.configurations import Configuration
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS
from catalog.scopes import CLASSIFY_SCOPE
from governance.actors import Actor
from governance.vocabulary import DataClass, TrustZone


class ApiClient(InTrustZone, models.Model):
    """A consumer app. Its token is shown once at creation; only its SHA-256 digest is stored."""

    name = models.CharField(max_length=100, unique=True)
    token_prefix = models.CharField(max_length=16, help_text="The first characters, to recognise a token.")
    token_digest = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    configurations = models.ManyToManyField(Configuration, related_name="api_clients", blank=True)
    default_input_data_class = models.CharField(
        max_length=32, choices=DataClass.choices, default=DataClass.EDITOR_CONTENT
    )
    # The client is a receiver: what the API shows it (previews, snippet and skill reads, run
    # transcripts) stays within this zone. Set by staff; no API scope can change it.
    trust_zone = models.CharField(
        max_length=32,
        choices=TrustZone.choices,
        default=TrustZone.EXTERNAL_GLOBAL,
        help_text="Where this client runs: API answers show it nothing classified above this zone.",
    )
    # Daily budgets (UTC days; agents/runtime/budget.py): empty is no limit. Checked before every send.
    daily_token_limit = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="Most tokens (prompt + completion) this client may spend per UTC day. Empty: no limit.",
    )
    daily_cost_limit = models.DecimalField(
        max_digits=COST_MAX_DIGITS,
        decimal_places=COST_DECIMAL_PLACES,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Most this client may spend per UTC day, in the currency of the models' prices. "
        "Empty: no limit.",
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "agents_apiclient"  # kept from before the split (decision 0031)
        ordering = ["name"]
        verbose_name = "API client"
        verbose_name_plural = "API clients"

    def __str__(self) -> str:
        return self.name

    def as_actor(self) -> Actor:
        """The client as the author of its writes (audit, history, governance events)."""
        return Actor.of_api_client(self.name, may_declassify=CLASSIFY_SCOPE in self.scopes)
