"""Whether publishing a configuration's draft needs an evaluation with no regression (decision 0038).

SQLite rebuilds ``agents_configuration`` to add a column, which drops its catalogue triggers; they are
installed again as agents' migration 0018 installs them.
"""

import importlib

from django.db import migrations, models

LABELS = importlib.import_module("agents.migrations.0018_reply_labels")


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0006_media_inputs"),
    ]

    operations = [
        migrations.AddField(
            model_name="configuration",
            name="require_no_regression",
            field=models.BooleanField(
                default=False,
                db_default=False,
                help_text="Publishing a draft that changes what this configuration sends needs an evaluation of that draft in which no case that held its expectations live fails with the drafts.",
            ),
        ),
        migrations.AddField(
            model_name="historicalconfiguration",
            name="require_no_regression",
            field=models.BooleanField(
                default=False,
                db_default=False,
                help_text="Publishing a draft that changes what this configuration sends needs an evaluation of that draft in which no case that held its expectations live fails with the drafts.",
            ),
        ),
        migrations.RunPython(
            LABELS.reinstall_configuration_triggers, LABELS.reinstall_configuration_triggers
        ),
    ]
