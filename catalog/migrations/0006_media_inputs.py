"""Media in a caller's input (docs/decisions/0042-images-and-files-in-input.md): whether a configuration
fetches remote media, and the input modalities a model declares.

SQLite rebuilds ``agents_configuration`` to add a column, which drops its catalogue triggers; they are
installed again as migration agents 0018 installs them. The model's new column joins the columns the
catalogue triggers on ``agents_llmmodel`` watch (a fallback's modalities are read from a worker's cache
under the catalogue token).
"""

import importlib

from django.db import migrations, models

import catalog.models.catalog

LABELS = importlib.import_module("agents.migrations.0018_reply_labels")
CAPABILITIES = importlib.import_module("agents.migrations.0007_llmmodel_capabilities")
EMBEDS = importlib.import_module("catalog.migrations.0002_llmmodel_embeds")
# Every column but calibration: the list test_catalog_cache checks against the model.
LLMMODEL_COLUMNS = (*EMBEDS.LLMMODEL_COLUMNS, "input_modalities")


def watch_modalities(apps: object, schema_editor: object) -> None:
    CAPABILITIES._reinstall(schema_editor, LLMMODEL_COLUMNS)


def unwatch_modalities(apps: object, schema_editor: object) -> None:
    CAPABILITIES._reinstall(schema_editor, EMBEDS.LLMMODEL_COLUMNS)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0005_personal_data_class"),
    ]

    operations = [
        migrations.AddField(
            model_name="configuration",
            name="allow_remote_media",
            field=models.BooleanField(
                default=False,
                db_default=False,
                help_text="Whether an image or PDF given by an http(s) URL is fetched by the service (within the MEDIA_* limits, never from a private address). Off: such a part is refused; inline (base64) media is always accepted.",
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="allow_remote_media",
            field=models.BooleanField(
                default=False,
                db_default=False,
                help_text="Whether an image or PDF given by an http(s) URL is fetched by the service (within the MEDIA_* limits, never from a private address). Off: such a part is refused; inline (base64) media is always accepted.",
            ),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="input_modalities",
            field=models.JSONField(
                blank=True,
                help_text='What the model reads besides text, a list of "image" and "pdf" ([]: text only). Empty: the catalogue\'s.',
                null=True,
                validators=[catalog.models.catalog._modalities_valid],
            ),
        ),
        migrations.RunPython(watch_modalities, unwatch_modalities),
        migrations.RunPython(
            LABELS.reinstall_configuration_triggers, LABELS.reinstall_configuration_triggers
        ),
    ]
