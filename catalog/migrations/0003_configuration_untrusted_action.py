"""What a configuration does with a consequential tool call from an untrusted context
(docs/decisions/0040-integrity-labels-and-consequential-tools.md).

SQLite rebuilds ``agents_configuration`` to add a column, which drops its catalogue triggers; they are
installed again as agents' migration 0018 installs them.
"""

import importlib

from django.db import migrations, models

LABELS = importlib.import_module("agents.migrations.0018_reply_labels")


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0002_llmmodel_embeds"),
    ]

    operations = [
        migrations.AddField(
            model_name="configuration",
            name="untrusted_action",
            field=models.CharField(
                db_default="approve",
                choices=[("approve", "Wait for a person's approval"), ("refuse", "Refuse the call")],
                default="approve",
                help_text="A tool call that acts on the world, asked for while tool results, untrusted skills or other untrusted content were in the step's context, is never run on the model's word: it waits for a person's approval, or is refused.",
                max_length=16,
                verbose_name="consequential calls from untrusted context",
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="untrusted_action",
            field=models.CharField(
                db_default="approve",
                choices=[("approve", "Wait for a person's approval"), ("refuse", "Refuse the call")],
                default="approve",
                help_text="A tool call that acts on the world, asked for while tool results, untrusted skills or other untrusted content were in the step's context, is never run on the model's word: it waits for a person's approval, or is refused.",
                max_length=16,
                verbose_name="consequential calls from untrusted context",
            ),
        ),
        migrations.RunPython(
            LABELS.reinstall_configuration_triggers, LABELS.reinstall_configuration_triggers
        ),
    ]
