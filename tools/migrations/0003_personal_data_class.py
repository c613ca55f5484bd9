"""The data classes take `personal_data` (decision 0032): choices and a check constraint only."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tools", "0002_mcpserver_annotations_trusted"),
    ]

    operations = [
        migrations.AlterField(
            model_name="mcpserver",
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
                help_text="The class of what its tools return: a tool is offered only where its class may go.",
                max_length=32,
            ),
        ),
    ]
