"""Which models embed (docs/decisions/0036-governed-embeddings.md): ``embeds`` and
``embedding_dimensions`` on the catalogue's models.

Both join the catalogue triggers' watched columns on ``agents_llmmodel`` (a worker keeps a
configuration's models under the catalogue token, and whether a target embeds decides where an
embedding call may go), as agents migrations 0007 and 0014 did for capabilities and prices.
"""

import importlib

import django.core.validators
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

COST = importlib.import_module("agents.migrations.0014_cost")
CAPABILITIES = importlib.import_module("agents.migrations.0007_llmmodel_capabilities")
EMBEDDING_COLUMNS = ("embeds", "embedding_dimensions")
# Every column but calibration: the list test_catalog_cache checks against the model.
LLMMODEL_COLUMNS = (*COST.LLMMODEL_COLUMNS, *EMBEDDING_COLUMNS)


def watch_embeddings(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    CAPABILITIES._reinstall(schema_editor, LLMMODEL_COLUMNS)


def unwatch_embeddings(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    CAPABILITIES._reinstall(schema_editor, COST.LLMMODEL_COLUMNS)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="llmmodel",
            name="embedding_dimensions",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="The length of the model's vectors; a request's dimensions may shorten them. Empty: "
                "not declared (a request's dimensions is passed on unchecked).",
                null=True,
                validators=[django.core.validators.MinValueValidator(1)],
            ),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="embeds",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="An embedding model: it answers /embeddings (vectors), never a completion.",
            ),
        ),
        migrations.RunPython(watch_embeddings, unwatch_embeddings),
    ]
