"""Classification of the configuration system prompt: existing rows observe, new rows enforce."""

from django.db import migrations

from governance.migration_operations import add_classification


class Migration(migrations.Migration):
    dependencies = [("agents", "0001_initial")]

    operations = add_classification(
        "configuration", prefix="system_prompt_", constraint="configuration_enforced_prompt_is_classified"
    )
