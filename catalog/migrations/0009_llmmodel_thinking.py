"""Whether a model takes extended thinking (docs/decisions/0035-the-anthropic-messages-api.md).

The model's new column joins the columns the catalogue triggers on ``agents_llmmodel`` watch (a
model's capabilities are read from a worker's cache under the catalogue token).
"""

import importlib

from django.db import migrations, models

CAPABILITIES = importlib.import_module("agents.migrations.0007_llmmodel_capabilities")
MEDIA = importlib.import_module("catalog.migrations.0006_media_inputs")
# Every column but calibration: the list test_catalog_cache checks against the model.
LLMMODEL_COLUMNS = (*MEDIA.LLMMODEL_COLUMNS, "thinking")


def watch_thinking(apps: object, schema_editor: object) -> None:
    CAPABILITIES._reinstall(schema_editor, LLMMODEL_COLUMNS)


def unwatch_thinking(apps: object, schema_editor: object) -> None:
    CAPABILITIES._reinstall(schema_editor, MEDIA.LLMMODEL_COLUMNS)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0008_configuration_quarantine_untrusted"),
    ]

    operations = [
        migrations.AddField(
            model_name="llmmodel",
            name="thinking",
            field=models.BooleanField(
                blank=True,
                help_text="Whether the model takes extended thinking (Anthropic's thinking with a budget) and answers thinking blocks. Empty: the catalogue's.",
                null=True,
            ),
        ),
        migrations.RunPython(watch_thinking, unwatch_thinking),
    ]
