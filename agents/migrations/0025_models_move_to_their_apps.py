"""The catalogue, tools, gateway and evaluations models leave the agents app for apps of their own.

The models kept their tables (``db_table``), so this migration changes no table: the models join this
app's state (``SeparateDatabaseAndState``, no database operation), and their content types move to
this app in place, keeping their ids, so permissions, groups, drafts and the admin log that point at
them are untouched (docs/decisions/0031-apps-by-feature.md).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0024_mcp_server_names_end_in_no_underscore"),
        ("catalog", "0001_initial"),
        ("tools", "0001_initial"),
        ("gateway", "0001_initial"),
        ("evaluations", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name="apiclient",
                    name="configurations",
                ),
                migrations.RemoveField(
                    model_name="completionrecord",
                    name="api_client",
                ),
                migrations.RemoveField(
                    model_name="storedresponse",
                    name="api_client",
                ),
                migrations.AlterField(
                    model_name="agentrun",
                    name="api_client",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="runs",
                        to="catalog.apiclient",
                        verbose_name="API client",
                    ),
                ),
                migrations.AlterField(
                    model_name="clientdailyusage",
                    name="client",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="daily_usage",
                        to="catalog.apiclient",
                    ),
                ),
                migrations.DeleteModel(
                    name="CatalogVersion",
                ),
                migrations.RemoveField(
                    model_name="completionrecord",
                    name="configuration",
                ),
                migrations.RemoveField(
                    model_name="completionrecord",
                    name="model",
                ),
                migrations.RemoveField(
                    model_name="configuration",
                    name="fallbacks",
                ),
                migrations.RemoveField(
                    model_name="configuration",
                    name="model",
                ),
                migrations.RemoveField(
                    model_name="configuration",
                    name="skills",
                ),
                migrations.RemoveField(
                    model_name="configuration",
                    name="summary_model",
                ),
                migrations.RemoveField(
                    model_name="configuration",
                    name="trusted_model",
                ),
                migrations.RemoveField(
                    model_name="storedresponse",
                    name="configuration",
                ),
                migrations.RemoveField(
                    model_name="evaluation",
                    name="configuration",
                ),
                migrations.RemoveField(
                    model_name="configurationfallback",
                    name="configuration",
                ),
                migrations.RemoveField(
                    model_name="evaluationcase",
                    name="configuration",
                ),
                migrations.RemoveField(
                    model_name="configurationskill",
                    name="configuration",
                ),
                migrations.AlterField(
                    model_name="agentrun",
                    name="configuration",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="runs",
                        to="catalog.configuration",
                    ),
                ),
                migrations.RemoveField(
                    model_name="configurationfallback",
                    name="model",
                ),
                migrations.RemoveField(
                    model_name="configurationskill",
                    name="skill",
                ),
                migrations.RemoveField(
                    model_name="evaluation",
                    name="model",
                ),
                migrations.RemoveField(
                    model_name="evaluationresult",
                    name="evaluation",
                ),
                migrations.RemoveField(
                    model_name="evaluationresult",
                    name="case",
                ),
                migrations.RemoveField(
                    model_name="historicalconfiguration",
                    name="history_user",
                ),
                migrations.RemoveField(
                    model_name="historicalconfiguration",
                    name="model",
                ),
                migrations.RemoveField(
                    model_name="historicalconfiguration",
                    name="summary_model",
                ),
                migrations.RemoveField(
                    model_name="historicalconfiguration",
                    name="trusted_model",
                ),
                migrations.RemoveField(
                    model_name="llmmodel",
                    name="provider",
                ),
                migrations.AlterField(
                    model_name="agentstep",
                    name="model",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="catalog.llmmodel",
                    ),
                ),
                migrations.DeleteModel(
                    name="McpServer",
                ),
                migrations.DeleteModel(
                    name="ToolSetting",
                ),
                migrations.DeleteModel(
                    name="ApiClient",
                ),
                migrations.DeleteModel(
                    name="CompletionRecord",
                ),
                migrations.DeleteModel(
                    name="StoredResponse",
                ),
                migrations.DeleteModel(
                    name="Configuration",
                ),
                migrations.DeleteModel(
                    name="ConfigurationFallback",
                ),
                migrations.DeleteModel(
                    name="ConfigurationSkill",
                ),
                migrations.DeleteModel(
                    name="Evaluation",
                ),
                migrations.DeleteModel(
                    name="EvaluationCase",
                ),
                migrations.DeleteModel(
                    name="EvaluationResult",
                ),
                migrations.DeleteModel(
                    name="HistoricalConfiguration",
                ),
                migrations.DeleteModel(
                    name="Provider",
                ),
                migrations.DeleteModel(
                    name="LlmModel",
                ),
            ],
            database_operations=[],
        ),
    ]
