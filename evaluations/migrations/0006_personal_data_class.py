"""The data classes take `personal_data` (decision 0032): choices and a check constraint only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0005_personal_data_class"),
        ("evaluations", "0005_content_purged_at"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="evaluationcase",
            name="evaluation_case_data_class",
        ),
        migrations.AlterField(
            model_name="evaluationcase",
            name="data_class",
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
                help_text="The class of the input and the caller context; a model whose zone does not accept it is refused the case.",
                max_length=32,
            ),
        ),
        migrations.AddConstraint(
            model_name="evaluationcase",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "data_class__in",
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
                name="evaluation_case_data_class",
            ),
        ),
    ]
