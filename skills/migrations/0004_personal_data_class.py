"""The data classes take `personal_data` (decision 0032): choices and a check constraint only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("skills", "0003_skill_audit_append_only_trigger"),
    ]

    operations = [
        migrations.AlterField(
            model_name="skillsource",
            name="default_data_class",
            field=models.CharField(
                choices=[
                    ("public_content", "Public content"),
                    ("editor_content", "Editor content"),
                    ("source_code", "Source code"),
                    ("personal_data", "Personal data"),
                    ("internal_configuration", "Internal configuration"),
                    ("system_diagnostics", "System diagnostics"),
                    ("secret_adjacent", "Secret-adjacent"),
                ],
                help_text="Given to each new skill of this source.",
                max_length=32,
            ),
        ),
    ]
