"""The ``governance.reclassify`` permission: declassifying a row is privileged (not in ``editors``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0004_decisions_late_redaction_reclassified_model_inactive"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="governanceevent",
            options={
                "ordering": ["-created_at", "-id"],
                "permissions": [
                    ("reclassify", "Can lower a data class, loosen a ceiling or relax enforcement")
                ],
            },
        ),
    ]
