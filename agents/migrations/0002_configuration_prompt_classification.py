"""Classification of the configuration system prompt (DESIGN.md §3).

Rows that exist when this runs predate classification: they become ``observe`` with no declared class,
so a violation is recorded but nothing they send today is cut off. The field default then switches
to ``enforce``, so every row created afterwards enforces and must declare its class and ceiling
(a database constraint backs the model validation).
"""

from django.db import migrations, models

DATA_CLASSES = [
    ("public_content", "Public content"),
    ("editor_content", "Editor content"),
    ("source_code", "Source code"),
    ("internal_configuration", "Internal configuration"),
    ("system_diagnostics", "System diagnostics"),
    ("secret_adjacent", "Secret-adjacent"),
]
ZONES = [
    ("local", "Local"),
    ("private_hosted", "Private hosted"),
    ("external_eu", "External (EU)"),
    ("external_global", "External (global)"),
]
ENFORCEMENT = [("enforce", "Enforce"), ("observe", "Observe")]


class Migration(migrations.Migration):
    dependencies = [("agents", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="configuration",
            name="system_prompt_data_class",
            field=models.CharField(blank=True, choices=DATA_CLASSES, default="", max_length=32),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="configuration",
            name="system_prompt_ceiling",
            field=models.CharField(blank=True, choices=ZONES, default="", max_length=32),
            preserve_default=False,
        ),
        # Existing rows take the one-off default "observe"; the model default is "enforce".
        migrations.AddField(
            model_name="configuration",
            name="system_prompt_enforcement",
            field=models.CharField(choices=ENFORCEMENT, default="observe", max_length=16),
        ),
        migrations.AlterField(
            model_name="configuration",
            name="system_prompt_enforcement",
            field=models.CharField(choices=ENFORCEMENT, default="enforce", max_length=16),
        ),
        migrations.AddConstraint(
            model_name="configuration",
            constraint=models.CheckConstraint(
                condition=models.Q(("system_prompt_enforcement", "observe"))
                | (~models.Q(("system_prompt_data_class", "")) & ~models.Q(("system_prompt_ceiling", ""))),
                name="configuration_enforced_prompt_is_classified",
            ),
        ),
    ]
