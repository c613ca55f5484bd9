"""Whether a configuration holds untrusted tool results behind a reference, read by schema-checked
quarantined calls (docs/decisions/0040-integrity-labels-and-consequential-tools.md).

SQLite rebuilds ``agents_configuration`` to add a column, which drops its catalogue triggers; they are
installed again as agents' migration 0018 installs them.
"""

import importlib

from django.db import migrations, models

LABELS = importlib.import_module("agents.migrations.0018_reply_labels")


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0007_compare_versions"),
    ]

    operations = [
        migrations.AddField(
            model_name="configuration",
            name="quarantine_untrusted",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="An untrusted tool result is held behind a reference instead of being shown to the model, which reads it with read_result: a separate call without tools whose answer must fit a declared type (an e-mail address, a number, one of given values, a short pattern).",
                verbose_name="hold untrusted results back",
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="quarantine_untrusted",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="An untrusted tool result is held behind a reference instead of being shown to the model, which reads it with read_result: a separate call without tools whose answer must fit a declared type (an e-mail address, a number, one of given values, a short pattern).",
                verbose_name="hold untrusted results back",
            ),
        ),
        migrations.RunPython(
            LABELS.reinstall_configuration_triggers, LABELS.reinstall_configuration_triggers
        ),
    ]
