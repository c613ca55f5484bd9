"""The data classes take `personal_data` (decision 0032): choices and a check constraint only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0027_content_purged_at"),
    ]

    operations = [
        migrations.AlterField(
            model_name="agentrun",
            name="input_data_class",
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
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="agentstep",
            name="label",
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
            model_name="agentstep",
            name="receiver_label",
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
            model_name="runmessage",
            name="data_class",
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
            model_name="runmessage",
            name="receiver_class",
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
            model_name="toolapproval",
            name="label",
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
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="toolapproval",
            name="tool_class",
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
                max_length=32,
            ),
        ),
    ]
