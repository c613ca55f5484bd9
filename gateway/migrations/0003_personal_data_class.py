"""The data classes take `personal_data` (decision 0032): choices and a check constraint only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0028_personal_data_class"),
        ("catalog", "0005_personal_data_class"),
        ("gateway", "0002_scores"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="score",
            name="score_label",
        ),
        migrations.AlterField(
            model_name="completionrecord",
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
                default="",
                db_default="",
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="score",
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
            model_name="storedresponse",
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
            model_name="storedresponse",
            name="receiver_label",
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
        migrations.AddConstraint(
            model_name="score",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "label__in",
                        [
                            "public_content",
                            "editor_content",
                            "source_code",
                            "personal_data",
                            "internal_configuration",
                            "system_diagnostics",
                            "secret_adjacent",
                        ],
                    )
                ),
                name="score_label",
            ),
        ),
    ]
