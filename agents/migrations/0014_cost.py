"""What calls cost: a model's cached-input and cache-write prices, each step's cost and the run's
total (catalog/pricing.py), and one row per completion served for the cost reports.

The new price columns join the catalogue triggers' watched columns on ``agents_llmmodel`` (a
fallback's prices are read from a worker's cache under the catalogue token), as migration 0007 did.
"""

import importlib
from decimal import Decimal

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

CAPABILITIES = importlib.import_module("agents.migrations.0007_llmmodel_capabilities")
PRICE_COLUMNS = ("cached_input_price_per_million", "cache_write_price_per_million")
# Every column but calibration: the list test_catalog_cache checks against the model.
LLMMODEL_COLUMNS = (*CAPABILITIES.LLMMODEL_COLUMNS, *PRICE_COLUMNS)


def watch_prices(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    CAPABILITIES._reinstall(schema_editor, LLMMODEL_COLUMNS)


def unwatch_prices(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    CAPABILITIES._reinstall(schema_editor, CAPABILITIES.LLMMODEL_COLUMNS)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0013_run_pins"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentrun",
            name="cost_total",
            field=models.DecimalField(decimal_places=10, default=Decimal("0"), max_digits=20),
        ),
        migrations.AddField(
            model_name="agentstep",
            name="cost",
            field=models.DecimalField(blank=True, decimal_places=10, max_digits=20, null=True),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="cache_write_price_per_million",
            field=models.DecimalField(
                blank=True,
                decimal_places=4,
                help_text="Per million prompt tokens written to the provider's cache (Anthropic charges 1.25 times the input price). Empty: the input price.",
                max_digits=10,
                null=True,
                validators=[django.core.validators.MinValueValidator(0)],
            ),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="cached_input_price_per_million",
            field=models.DecimalField(
                blank=True,
                decimal_places=4,
                help_text="Per million prompt tokens read from the provider's cache. Empty: the input price.",
                max_digits=10,
                null=True,
                validators=[django.core.validators.MinValueValidator(0)],
            ),
        ),
        migrations.CreateModel(
            name="CompletionRecord",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("request_id", models.CharField(max_length=32, unique=True)),
                ("prompt_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("cached_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("cache_write_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("completion_tokens", models.PositiveIntegerField(blank=True, null=True)),
                ("cost", models.DecimalField(blank=True, decimal_places=10, max_digits=20, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                (
                    "api_client",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="completions",
                        to="agents.apiclient",
                    ),
                ),
                (
                    "configuration",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="completions",
                        to="agents.configuration",
                    ),
                ),
                (
                    "model",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="+", to="agents.llmmodel"
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.RunPython(watch_prices, unwatch_prices),
    ]
