"""Compaction (docs/decisions/0021-compaction-is-a-governed-send.md): a configuration's context
strategy, threshold, what it keeps and its summary model; a compaction step's record.

SQLite rebuilds ``agents_configuration`` to add a column, which drops its catalogue triggers; they are
installed again as migration 0018 installs them.
"""

import importlib

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models

LABELS = importlib.import_module("agents.migrations.0018_reply_labels")


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0020_mcp_servers"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentstep",
            name="compaction",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="configuration",
            name="compaction_keep",
            field=models.PositiveSmallIntegerField(
                default=2,
                help_text="The most recent tool results (clear) or turns (summarise) kept as they are.",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(50),
                ],
            ),
        ),
        migrations.AddField(
            model_name="configuration",
            name="compaction_threshold",
            field=models.FloatField(
                default=0.8,
                help_text="Compact when the last step's prompt passes this share of its model's window (and, in any case, before a step would drop turns or overflow).",
                validators=[
                    django.core.validators.MinValueValidator(0.05),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.AddField(
            model_name="configuration",
            name="context_strategy",
            field=models.CharField(
                choices=[
                    ("drop_oldest", "Drop the oldest turns"),
                    ("clear_tool_results", "Clear old tool results"),
                    ("summarise", "Summarise older turns"),
                ],
                default="drop_oldest",
                help_text="What a run does when its context fills. Drop the oldest turns: the fit drops them at every step. The other two compact the run's transcript in a step of their own.",
                max_length=24,
            ),
        ),
        migrations.AddField(
            model_name="configuration",
            name="summary_model",
            field=models.ForeignKey(
                blank=True,
                help_text="Writes the summaries (its zone must admit what it summarises). Empty: the configuration's model.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="agents.llmmodel",
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="compaction_keep",
            field=models.PositiveSmallIntegerField(
                default=2,
                help_text="The most recent tool results (clear) or turns (summarise) kept as they are.",
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(50),
                ],
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="compaction_threshold",
            field=models.FloatField(
                default=0.8,
                help_text="Compact when the last step's prompt passes this share of its model's window (and, in any case, before a step would drop turns or overflow).",
                validators=[
                    django.core.validators.MinValueValidator(0.05),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="context_strategy",
            field=models.CharField(
                choices=[
                    ("drop_oldest", "Drop the oldest turns"),
                    ("clear_tool_results", "Clear old tool results"),
                    ("summarise", "Summarise older turns"),
                ],
                default="drop_oldest",
                help_text="What a run does when its context fills. Drop the oldest turns: the fit drops them at every step. The other two compact the run's transcript in a step of their own.",
                max_length=24,
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="summary_model",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                help_text="Writes the summaries (its zone must admit what it summarises). Empty: the configuration's model.",
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="agents.llmmodel",
            ),
        ),
        migrations.AlterField(
            model_name="agentstep",
            name="kind",
            field=models.CharField(
                choices=[("model_call", "Model call"), ("compaction", "Compaction")],
                default="model_call",
                max_length=16,
            ),
        ),
        migrations.RunPython(
            LABELS.reinstall_configuration_triggers, LABELS.reinstall_configuration_triggers
        ),
    ]
