"""What a model's API accepts (token parameter, sampling, system role, prompt-cache minimum), per row.

Empty values mean "the built-in catalogue's, else the plain chat default", so existing rows keep
today's requests. The catalogue triggers on ``agents_llmmodel`` watch named columns; a fallback's
capabilities are read from a worker's cache under the catalogue token, so the new columns join the
watched list (and SQLite, which rebuilds the table to add a column with a default, gets its
triggers back).
"""

import importlib

import django.core.validators
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

CATALOG = importlib.import_module("agents.migrations.0006_catalog_version")
TABLE = "agents_llmmodel"
CAPABILITY_COLUMNS = ("token_parameter", "accepts_sampling", "system_role", "prompt_cache_min_tokens")
# Every column but calibration: the list test_catalog_cache checks against the model.
LLMMODEL_COLUMNS = (*CATALOG.CATALOG_TABLES[TABLE], *CAPABILITY_COLUMNS)


def _reinstall(schema_editor: BaseDatabaseSchemaEditor, columns: tuple[str, ...]) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        names, on_table, create = ("insert", "update", "delete"), "", CATALOG._sqlite_statements
    elif vendor == "postgresql":
        names, on_table, create = ("write", "truncate"), f" ON {TABLE}", CATALOG._postgres_statements
    else:
        raise NotImplementedError(f"catalogue version triggers are not written for {vendor}")
    for name in names:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_catalog_{name}{on_table};", params=None)
    for statement in create(TABLE, columns):
        schema_editor.execute(statement, params=None)


def watch_capabilities(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _reinstall(schema_editor, LLMMODEL_COLUMNS)


def unwatch_capabilities(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _reinstall(schema_editor, CATALOG.CATALOG_TABLES[TABLE])


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0006_catalog_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="llmmodel",
            name="accepts_sampling",
            field=models.BooleanField(
                blank=True,
                help_text="Whether temperature, top_p etc. are accepted. Empty: the catalogue's, else yes.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="prompt_cache_min_tokens",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Shortest prompt prefix the provider caches (Anthropic). Empty: the catalogue's.",
                null=True,
                validators=[django.core.validators.MinValueValidator(1)],
            ),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="system_role",
            field=models.CharField(
                blank=True,
                choices=[("system", "system"), ("developer", "developer (OpenAI reasoning models)")],
                help_text="The role of the system message. Empty: the catalogue's, else system.",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="llmmodel",
            name="token_parameter",
            field=models.CharField(
                blank=True,
                choices=[
                    ("max_tokens", "max_tokens"),
                    ("max_completion_tokens", "max_completion_tokens (OpenAI reasoning models)"),
                ],
                help_text="The request parameter for the reply limit. Empty: the catalogue's, else max_tokens.",
                max_length=32,
            ),
        ),
        migrations.RunPython(watch_capabilities, unwatch_capabilities),
    ]
