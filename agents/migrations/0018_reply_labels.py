"""Reply labels and receivers (docs/decisions/0018-reply-labels-and-receivers.md): a run's receiver
zone, each step's labels and receipt, an assistant turn's label for its receiver, and a
configuration's declassification of its answers and its trusted model.

SQLite rebuilds ``agents_configuration`` to add a column, which drops its catalogue triggers; they are
installed again (every column watched, as migration 0006 installed them).
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

CATALOG = importlib.import_module("agents.migrations.0006_catalog_version")
TABLE = "agents_configuration"


def reinstall_configuration_triggers(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        names, on_table, create = ("insert", "update", "delete"), "", CATALOG._sqlite_statements
    elif vendor == "postgresql":
        names, on_table, create = ("write", "truncate"), f" ON {TABLE}", CATALOG._postgres_statements
    else:
        raise NotImplementedError(f"catalogue version triggers are not written for {vendor}")
    for name in names:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_catalog_{name}{on_table};", params=None)
    for statement in create(TABLE, CATALOG.CATALOG_TABLES[TABLE]):
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0017_model_names"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentrun",
            name="receiver_zone",
            field=models.CharField(
                choices=[
                    ("local", "Local"),
                    ("private_hosted", "Private hosted"),
                    ("external_eu", "External (EU)"),
                    ("external_global", "External (global)"),
                ],
                default="external_global",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="agentstep",
            name="label",
            field=models.CharField(
                blank=True,
                choices=[
                    ("public_content", "Public content"),
                    ("editor_content", "Editor content"),
                    ("source_code", "Source code"),
                    ("internal_configuration", "Internal configuration"),
                    ("system_diagnostics", "System diagnostics"),
                    ("secret_adjacent", "Secret-adjacent"),
                ],
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="agentstep",
            name="receipt",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="agentstep",
            name="receiver_label",
            field=models.CharField(
                blank=True,
                choices=[
                    ("public_content", "Public content"),
                    ("editor_content", "Editor content"),
                    ("source_code", "Source code"),
                    ("internal_configuration", "Internal configuration"),
                    ("system_diagnostics", "System diagnostics"),
                    ("secret_adjacent", "Secret-adjacent"),
                ],
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="configuration",
            name="answers_deliverable_to",
            field=models.CharField(
                blank=True,
                choices=[
                    ("local", "Local"),
                    ("private_hosted", "Private hosted"),
                    ("external_eu", "External (EU)"),
                    ("external_global", "External (global)"),
                ],
                editable=False,
                help_text="Answers may be delivered down to this zone, whatever they were derived from (a recorded declassification). Empty: an answer keeps the class of what it came from.",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="configuration",
            name="trusted_model",
            field=models.ForeignKey(
                blank=True,
                help_text="Serves, alone, the sends whose sources exceed the model's zone. Empty: they are refused.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="agents.llmmodel",
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="answers_deliverable_to",
            field=models.CharField(
                blank=True,
                choices=[
                    ("local", "Local"),
                    ("private_hosted", "Private hosted"),
                    ("external_eu", "External (EU)"),
                    ("external_global", "External (global)"),
                ],
                editable=False,
                help_text="Answers may be delivered down to this zone, whatever they were derived from (a recorded declassification). Empty: an answer keeps the class of what it came from.",
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="trusted_model",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                help_text="Serves, alone, the sends whose sources exceed the model's zone. Empty: they are refused.",
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to="agents.llmmodel",
            ),
        ),
        migrations.AddField(
            model_name="runmessage",
            name="receiver_class",
            field=models.CharField(
                blank=True,
                choices=[
                    ("public_content", "Public content"),
                    ("editor_content", "Editor content"),
                    ("source_code", "Source code"),
                    ("internal_configuration", "Internal configuration"),
                    ("system_diagnostics", "System diagnostics"),
                    ("secret_adjacent", "Secret-adjacent"),
                ],
                max_length=32,
            ),
        ),
        migrations.AddField(
            model_name="runmessage",
            name="label_observed",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(reinstall_configuration_triggers, reinstall_configuration_triggers),
    ]
