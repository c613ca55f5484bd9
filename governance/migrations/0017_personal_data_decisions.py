"""The event log names the personal-data decisions (decision 0039): choices only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0016_key_id_database_default"),
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
                    ("approval_requested", "Tool approval requested"),
                    ("approval_granted", "Tool call approved"),
                    ("approval_denied", "Tool call denied"),
                    ("approval_expired", "Tool approval expired"),
                    ("personal_data_found", "Personal data found"),
                    ("pseudonymized", "Personal data pseudonymized"),
                    ("personal_data_override", "Personal data class overridden"),
                ],
                max_length=32,
            ),
        ),
    ]
