"""Providers and their models, and the catalogue version every worker's caches are keyed by
(configurations: ``catalog/models/configurations.py``; API clients: ``clients.py``)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, cast

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import connections, models

from catalog.models.float_sql import Float, FloatFunctions
from catalog.models.sql import Table, executed
from context_assembly.calibration import CalibrationState, blended_factor, sample_ratio
from context_assembly.parts import MODALITIES
from context_assembly.profiles import ModelCapabilities, capabilities_for
from context_assembly.profiles import SystemRole as ProfileSystemRole
from context_assembly.profiles import TokenParameter as ProfileTokenParameter
from governance.vocabulary import TrustZone


class ProviderKind(models.TextChoices):
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible"
    ANTHROPIC = "anthropic", "Anthropic"
    LOCAL = "local", "Local (offline, deterministic)"


class Tokenizer(models.TextChoices):
    O200K_BASE = "o200k_base", "o200k_base (tiktoken)"
    CL100K_BASE = "cl100k_base", "cl100k_base (tiktoken)"
    APPROXIMATE = "approximate", "Calibrated approximation"


class TokenParameter(models.TextChoices):
    MAX_TOKENS = "max_tokens", "max_tokens"
    MAX_COMPLETION_TOKENS = "max_completion_tokens", "max_completion_tokens (OpenAI reasoning models)"


class SystemRole(models.TextChoices):
    SYSTEM = "system", "system"
    DEVELOPER = "developer", "developer (OpenAI reasoning models)"


CATALOG_VERSION_ID = 1


class CatalogVersion(models.Model):
    """One row whose token changes whenever anything a send plan is built from changes.

    Database triggers (migration 0006) replace the token on every insert, update and delete of the
    catalogue tables a plan reads (snippets and their tags, skills and their sources, providers,
    models, configurations with their skill and fallback links, tool settings), whichever client
    writes them. Workers keep a configuration's resolved parts only under the token they were built
    under. A model's calibration update does not change it: the serving model is read at every send.
    """

    token = models.CharField(max_length=64)

    class Meta:
        db_table = "agents_catalogversion"  # kept from before the split (decision 0031)

    def __str__(self) -> str:
        return self.token


class InTrustZone:
    """A row with a ``trust_zone`` column: the zone a provider serves from, the zone a client receives in."""

    trust_zone: str

    @property
    def zone(self) -> TrustZone:
        """The stored zone, read fail-closed: an empty or unknown value is ``external_global``."""
        return TrustZone.parse(self.trust_zone)


class Provider(InTrustZone, models.Model):
    """Where models are served. The API key is read from the named environment variable, never stored."""

    identifier = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=ProviderKind.choices)
    base_url = models.URLField(blank=True)
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="Name of the environment variable holding the API key."
    )
    # Read through TrustZone.parse: an empty or unknown stored value is external_global.
    trust_zone = models.CharField(max_length=32, choices=TrustZone.choices)
    timeout_seconds = models.FloatField(
        default=30.0, validators=[MinValueValidator(0.1), MaxValueValidator(600)]
    )
    max_retries = models.PositiveSmallIntegerField(default=2, validators=[MaxValueValidator(5)])
    options = models.JSONField(
        default=dict, blank=True, help_text="Adapter options (for the local provider: a reply script)."
    )
    is_active = models.BooleanField(default=True)

    class Meta:
        db_table = "agents_provider"  # kept from before the split (decision 0031)
        ordering = ["identifier"]

    def __str__(self) -> str:
        return self.identifier


class LlmModelQuerySet(models.QuerySet["LlmModel"]):
    def calibrate(
        self, *, model_id: int, reported: int, estimated: int, at: datetime
    ) -> CalibrationState | None:
        """Blend one sample (``reported`` prompt tokens of a call we estimated at ``estimated``) into
        the model's stored calibration, in one ``UPDATE … RETURNING`` statement.

        The database applies :func:`~context_assembly.calibration.blended_factor` (rendered as SQL
        from that one definition) to the stored state, so concurrent steps on the same model neither
        lose a sample nor wait on a read lock. Returns the state after the sample; None when the
        figures are no sample (nothing is written) or the model is gone.
        """
        statement = self.calibrate_sql(model_id=model_id, reported=reported, estimated=estimated, at=at)
        if statement is None:
            return None
        connection = connections[self.db]
        table = Table(self.model, connection)
        sql, params = statement
        returning = f"{table.column('calibration_factor')}, {table.column('calibration_samples')}"
        with connection.cursor() as cursor:
            row = executed(cursor, f"{sql} RETURNING {returning}", params).fetchone()
        return None if row is None else CalibrationState(factor=float(row[0]), samples=int(row[1]))

    def calibrate_sql(
        self, *, model_id: int, reported: int, estimated: int, at: datetime
    ) -> tuple[str, list[Any]] | None:
        """:meth:`calibrate`'s ``UPDATE`` and its parameters, not run and without its ``RETURNING``
        (its text ends with its ``WHERE`` clause, so a statement may embed it:
        ``agents/runtime/held_writes.py``); None when the figures are no sample."""
        ratio = sample_ratio(reported=reported, estimated=estimated)
        if ratio is None:
            return None
        connection = connections[self.db]
        table = Table(self.model, connection)
        factor, samples = table.column("calibration_factor"), table.column("calibration_samples")
        functions = FloatFunctions(connection)
        blended = blended_factor(
            Float.column(factor),
            Float.column(samples),
            Float.of(ratio),
            greatest=functions.greatest,
            least=functions.least,
        )
        sql = (
            f"UPDATE {table.name} SET {factor} = {blended.sql}, {samples} = {samples} + 1, "
            f"{table.column('calibration_updated_at')} = %s WHERE {table.column('pk')} = %s"
        )
        return sql, [*blended.params, table.value("calibration_updated_at", at), model_id]


def _modalities_valid(value: object) -> None:
    if not isinstance(value, list) or any(item not in MODALITIES for item in value):
        raise ValidationError(f"Expected a list of {', '.join(MODALITIES)}.")


def _cache_price(what: str) -> models.DecimalField[Decimal | None, Decimal | None]:
    """A price of cached prompt tokens: optional, and when empty the input price applies."""
    return models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=f"{what} Empty: the input price.",
    )


class LlmModel(models.Model):
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="models")
    model_id = models.CharField(max_length=200, help_text="The provider's name for the model.")
    context_window = models.PositiveIntegerField(validators=[MinValueValidator(256)])
    max_output_tokens = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    tokenizer = models.CharField(max_length=32, choices=Tokenizer.choices)
    input_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    output_price_per_million = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    # Prices of prompt tokens read from and written to the provider's cache (catalog/pricing.py).
    cached_input_price_per_million = _cache_price("Per million prompt tokens read from the provider's cache.")
    cache_write_price_per_million = _cache_price(
        "Per million prompt tokens written to the provider's cache (Anthropic charges 1.25 times the input "
        "price)."
    )
    # Calibration of our estimate against provider-reported prompt tokens (context_assembly.calibration).
    calibration_factor = models.FloatField(default=1.0, editable=False)
    calibration_samples = models.PositiveIntegerField(default=0, editable=False)
    calibration_updated_at = models.DateTimeField(null=True, blank=True, editable=False)
    # What the model's API accepts. Empty: the built-in catalogue's value for this model id (a dated
    # snapshot takes its family's), else the plain chat default (context_assembly.profiles).
    token_parameter = models.CharField(
        max_length=32,
        choices=TokenParameter.choices,
        blank=True,
        help_text="The request parameter for the reply limit. Empty: the catalogue's, else max_tokens.",
    )
    accepts_sampling = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether temperature, top_p etc. are accepted. Empty: the catalogue's, else yes.",
    )
    system_role = models.CharField(
        max_length=16,
        choices=SystemRole.choices,
        blank=True,
        help_text="The role of the system message. Empty: the catalogue's, else system.",
    )
    prompt_cache_min_tokens = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Shortest prompt prefix the provider caches (Anthropic). Empty: the catalogue's.",
    )
    # What the model serves (docs/decisions/0036-governed-embeddings.md): a chat model answers
    # completions, an embedding model answers /embeddings and nothing else.
    embeds = models.BooleanField(
        default=False,
        db_default=False,
        help_text="An embedding model: it answers /embeddings (vectors), never a completion.",
    )
    embedding_dimensions = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The length of the model's vectors; a request's dimensions may shorten them. Empty: "
        "not declared (a request's dimensions is passed on unchecked).",
    )
    input_modalities = models.JSONField(
        null=True,
        blank=True,
        validators=[_modalities_valid],
        help_text=(
            'What the model reads besides text, a list of "image" and "pdf" ([]: text only). '
            "Empty: the catalogue's."
        ),
    )
    thinking = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether the model takes extended thinking (Anthropic's thinking with a budget) and "
        "answers thinking blocks. Empty: the catalogue's.",
    )
    is_active = models.BooleanField(default=True)

    objects = LlmModelQuerySet.as_manager()

    class Meta:
        db_table = "agents_llmmodel"  # kept from before the split (decision 0031)
        ordering = ["provider__identifier", "model_id"]
        verbose_name = "LLM model"
        verbose_name_plural = "LLM models"
        constraints = [
            models.UniqueConstraint(fields=["provider", "model_id"], name="llmmodel_unique_per_provider"),
            models.CheckConstraint(
                condition=models.Q(max_output_tokens__lt=models.F("context_window")),
                name="llmmodel_output_below_window",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.identifier}/{self.model_id}"

    @property
    def modalities(self) -> tuple[list[str], list[str]]:
        """What the model takes in and gives back, as OpenAI's model objects name them."""
        return (["text"], ["embedding"]) if self.embeds else (["text"], ["text"])

    @property
    def capabilities(self) -> ModelCapabilities:
        """What this model's API accepts: the row's declared values over the catalogue's."""
        return capabilities_for(
            self.model_id,
            # The choices hold these to the vocabulary; ModelCapabilities refuses anything else.
            token_parameter=cast(ProfileTokenParameter | None, self.token_parameter or None),
            sampling=self.accepts_sampling,
            system_role=cast(ProfileSystemRole | None, self.system_role or None),
            cache_min_tokens=self.prompt_cache_min_tokens,
            input_modalities=self.input_modalities,
            thinking=self.thinking,
        )
