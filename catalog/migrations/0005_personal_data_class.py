"""The data classes take `personal_data` (decision 0032): choices and a check constraint only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0004_configuration_personal_data_outcome"),
    ]

    operations = [
        migrations.AlterField(
            model_name="apiclient",
            name="default_input_data_class",
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
                default="editor_content",
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="configuration",
            name="system_prompt_data_class",
            field=models.CharField(
                blank=True,
                choices=[
                    ("public_content", "Public content"),
                    ("editor_content", "Editor content"),
                    ("source_code", "Source code"),
                    ("personal_data", "Personal data"),
                    ("internal_configuration", "Internal configuration"),
                    ("system_diagnostics", "System diagnostics"),
                    ("secret_adjacent", "Secret-adjacent"),
                ],
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="historicalconfiguration",
            name="system_prompt_data_class",
            field=models.CharField(
                blank=True,
                choices=[
                    ("public_content", "Public content"),
                    ("editor_content", "Editor content"),
                    ("source_code", "Source code"),
                    ("personal_data", "Personal data"),
                    ("internal_configuration", "Internal configuration"),
                    ("system_diagnostics", "System diagnostics"),
                    ("secret_adjacent", "Secret-adjacent"),
                ],
                max_length=32,
            ),
        ),
    ]
