"""The evaluations' models, until now the agents app's: evaluation cases, evaluations, results.

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
                    name="Evaluation",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("finished", "Finished"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=16,
                            ),
                        ),
                        ("started_by", models.CharField(max_length=200)),
                        ("drafts", models.JSONField(blank=True, default=list)),
                        ("cases", models.JSONField(blank=True, default=list)),
                        ("lease_until", models.DateTimeField(blank=True, null=True)),
                        ("pins", models.JSONField(blank=True, default=list)),
                        ("total", models.PositiveIntegerField(default=0)),
                        ("done", models.PositiveIntegerField(default=0)),
                        ("passed", models.BooleanField(blank=True, null=True)),
                        ("error", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "configuration",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="evaluations",
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
                        "db_table": "agents_evaluation",
                        "ordering": ["-created_at", "-id"],
                        "permissions": [("run_evaluation", "Can run an evaluation of a configuration")],
                    },
                ),
                migrations.CreateModel(
                    name="EvaluationCase",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=200)),
                        ("input", models.TextField(help_text="The task input, sent as the user's message.")),
                        (
                            "caller_context",
                            models.TextField(
                                blank=True,
                                help_text="Optional caller context, sent as one context item named 'context'.",
                            ),
                        ),
                        (
                            "data_class",
                            models.CharField(
                                choices=[
                                    ("public_content", "Public content"),
                                    ("editor_content", "Editor content"),
                                    ("source_code", "Source code"),
                                    ("internal_configuration", "Internal configuration"),
                                    ("system_diagnostics", "System diagnostics"),
                                    ("secret_adjacent", "Secret-adjacent"),
                                ],
                                help_text="The class of the input and the caller context; a model whose zone does not accept it is refused the case.",
                                max_length=32,
                            ),
                        ),
                        (
                            "must_contain",
                            models.CharField(
                                blank=True,
                                help_text="The answer must contain this text (case-insensitive).",
                                max_length=500,
                            ),
                        ),
                        (
                            "must_not_contain",
                            models.CharField(
                                blank=True,
                                help_text="The answer must not contain this text (case-insensitive).",
                                max_length=500,
                            ),
                        ),
                        (
                            "max_tokens",
                            models.PositiveIntegerField(
                                blank=True,
                                help_text="The answer may take at most this many tokens.",
                                null=True,
                            ),
                        ),
                        (
                            "must_be_permitted",
                            models.BooleanField(
                                default=False,
                                help_text="Governance must permit the send (a refusal fails the case).",
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        (
                            "configuration",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="evaluation_cases",
                                to="catalog.configuration",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_evaluationcase",
                        "ordering": ["configuration", "position", "name", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="EvaluationResult",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("case_name", models.CharField(max_length=200)),
                        ("case_input", models.TextField(blank=True)),
                        ("case_data_class", models.CharField(blank=True, max_length=32)),
                        ("position", models.PositiveSmallIntegerField()),
                        (
                            "side",
                            models.CharField(
                                choices=[("live", "Live"), ("drafted", "Live + drafts")], max_length=16
                            ),
                        ),
                        (
                            "outcome",
                            models.CharField(
                                choices=[
                                    ("answered", "Answered"),
                                    ("refused", "Refused by governance"),
                                    ("overflow", "Over the window"),
                                    ("failed", "Provider failed"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("answer", models.TextField(blank=True)),
                        ("message", models.TextField(blank=True)),
                        ("breakdown", models.JSONField(blank=True, default=dict)),
                        ("prompt_tokens", models.PositiveIntegerField(blank=True, null=True)),
                        ("completion_tokens", models.PositiveIntegerField(blank=True, null=True)),
                        (
                            "cost",
                            models.DecimalField(blank=True, decimal_places=10, max_digits=20, null=True),
                        ),
                        ("latency_ms", models.PositiveIntegerField(blank=True, null=True)),
                        ("decision", models.JSONField(blank=True, default=dict)),
                        ("receipt", models.JSONField(blank=True, default=dict)),
                        ("checks", models.JSONField(blank=True, default=list)),
                        ("passed", models.BooleanField()),
                        (
                            "case",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="evaluations.evaluationcase",
                            ),
                        ),
                        (
                            "evaluation",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="results",
                                to="evaluations.evaluation",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_evaluationresult",
                        "ordering": ["evaluation", "position", "side"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="evaluationcase",
                    constraint=models.UniqueConstraint(
                        fields=("configuration", "name"), name="evaluation_case_unique_name"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="evaluationcase",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            (
                                "data_class__in",
                                [
                                    "public_content",
                                    "editor_content",
                                    "source_code",
                                    "internal_configuration",
                                    "system_diagnostics",
                                    "secret_adjacent",
                                ],
                            )
                        ),
                        name="evaluation_case_data_class",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="evaluationresult",
                    constraint=models.UniqueConstraint(
                        fields=("evaluation", "position", "side"), name="evaluation_result_once"
                    ),
                ),
            ],
            database_operations=[],
        ),
        content_types_moved(
            from_app="agents",
            to_app="evaluations",
            models=["evaluationcase", "evaluation", "evaluationresult"],
        ),
    ]
