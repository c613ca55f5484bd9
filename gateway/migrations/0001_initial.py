"""The gateway's models, until now the agents app's: completion records and stored responses.

The models kept their tables (``db_table``), so this migration changes no table: the models join this
app's state (``SeparateDatabaseAndState``, no database operation), and their content types move to
this app in place, keeping their ids, so permissions, groups, drafts and the admin log that point at
them are untouched (docs/decisions/0031-apps-by-feature.md).
"""

import django.db.models.deletion
from django.db import migrations, models

from governance.migration_operations import content_types_moved


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("agents", "0024_mcp_server_names_end_in_no_underscore"),
        ("governance", "0014_governance_anchor_head"),
        ("snippets", "0003_publish_permission"),
        ("skills", "0003_skill_audit_append_only_trigger"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("catalog", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
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
                        (
                            "cost",
                            models.DecimalField(blank=True, decimal_places=10, max_digits=20, null=True),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "api_client",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="completions",
                                to="catalog.apiclient",
                            ),
                        ),
                        (
                            "configuration",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="completions",
                                to="catalog.configuration",
                            ),
                        ),
                        (
                            "model",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="catalog.llmmodel",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_completionrecord",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="StoredResponse",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("response_id", models.CharField(max_length=64, unique=True)),
                        ("request_id", models.CharField(max_length=32)),
                        (
                            "label",
                            models.CharField(
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
                        (
                            "receiver_label",
                            models.CharField(
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
                        ("label_observed", models.BooleanField(default=False)),
                        ("conversation", models.JSONField(default=list)),
                        ("input_tokens", models.PositiveIntegerField(blank=True, null=True)),
                        ("output_tokens", models.PositiveIntegerField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "api_client",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="responses",
                                to="catalog.apiclient",
                            ),
                        ),
                        (
                            "configuration",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="catalog.configuration",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_storedresponse",
                        "ordering": ["-created_at"],
                    },
                ),
            ],
            database_operations=[],
        ),
        content_types_moved(
            from_app="agents", to_app="gateway", models=["completionrecord", "storedresponse"]
        ),
    ]
