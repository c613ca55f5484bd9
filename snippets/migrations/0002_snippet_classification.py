"""Classification of snippets: existing rows observe, new rows enforce."""

from django.db import migrations

from governance.migration_operations import add_classification


class Migration(migrations.Migration):
    dependencies = [("snippets", "0001_initial")]

    operations = add_classification(
        "snippet", constraint="snippet_enforced_is_classified", historical_model="historicalsnippet"
    )
