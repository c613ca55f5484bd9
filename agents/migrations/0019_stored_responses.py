"""Stored responses of ``/api/openai/v1/responses`` (docs/decisions/0024-the-responses-api.md)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0018_reply_labels"),
    ]

    operations = [
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
                        to="agents.apiclient",
                    ),
                ),
                (
                    "configuration",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="agents.configuration",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
    ]
