"""MCP tool servers (tools/models.py; docs/decisions/0023-mcp-tool-servers.md)."""

import re

import django.core.validators
from django.db import migrations, models

import catalog.models.catalog


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0019_stored_responses"),
    ]

    operations = [
        migrations.CreateModel(
            name="McpServer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "name",
                    models.CharField(
                        help_text="Its tools are named mcp__<name>__<tool>; a configuration allows them by that name or all of them by the group mcp:<name>.",
                        max_length=24,
                        unique=True,
                        validators=[
                            django.core.validators.RegexValidator(
                                re.compile("^[a-z0-9](?:[a-z0-9-]|_(?!_))*$"),
                                "Lowercase letters, digits, '-' and single '_' only.",
                            )
                        ],
                    ),
                ),
                (
                    "transport",
                    models.CharField(
                        choices=[
                            ("streamable_http", "Streamable HTTP (a URL on the allow-list)"),
                            ("stdio", "stdio (a local command)"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "url",
                    models.URLField(
                        blank=True, help_text="Streamable HTTP: the endpoint, e.g. http://host:port/mcp."
                    ),
                ),
                (
                    "command",
                    models.CharField(blank=True, help_text="stdio: the program to run.", max_length=500),
                ),
                (
                    "args",
                    models.JSONField(
                        blank=True, default=list, help_text="stdio: its arguments, a list of strings."
                    ),
                ),
                (
                    "trust_zone",
                    models.CharField(
                        choices=[
                            ("local", "Local"),
                            ("private_hosted", "Private hosted"),
                            ("external_eu", "External (EU)"),
                            ("external_global", "External (global)"),
                        ],
                        max_length=32,
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
                        help_text="The class of what its tools return: a tool is offered only where its class may go.",
                        max_length=32,
                    ),
                ),
                (
                    "timeout_seconds",
                    models.FloatField(
                        default=10.0,
                        validators=[
                            django.core.validators.MinValueValidator(0.1),
                            django.core.validators.MaxValueValidator(120),
                        ],
                    ),
                ),
                ("is_active", models.BooleanField(default=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["name"],
                "verbose_name": "MCP server",
                "permissions": [
                    ("register_stdio_mcp_server", "Can register an MCP server run as a local command (stdio)")
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("timeout_seconds__gte", 0.1), ("timeout_seconds__lte", 120)),
                        name="mcp_server_timeout_range",
                    )
                ],
            },
            bases=(catalog.models.catalog.InTrustZone, models.Model),
        ),
    ]
