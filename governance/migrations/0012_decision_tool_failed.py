"""The tool_failed decision: a tool could not do its work (an MCP server down or slow)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0011_reply_labels"),
    ]

    operations = [
        migrations.AlterField(
            model_name="governanceevent",
            name="decision",
            field=models.CharField(
                choices=[
                    ("context_blocked", "Context blocked"),
                    ("tool_denied", "Tool denied"),
                    ("response_blocked", "Response blocked"),
                    ("secret_redacted", "Secret redacted"),
                    ("injection_flagged", "Injection flagged"),
                    ("late_redaction", "Late redaction"),
                    ("reclassified", "Reclassified"),
                    ("model_inactive", "Model inactive"),
                    ("budget_exhausted", "Budget exhausted"),
                    ("routed", "Routed to the trusted model"),
                    ("tool_failed", "Tool failed"),
                ],
                max_length=32,
            ),
        ),
    ]
