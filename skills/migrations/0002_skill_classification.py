"""Classification of skills: existing rows observe, new rows enforce."""

from django.db import migrations

from governance.migration_operations import add_classification


class Migration(migrations.Migration):
    dependencies = [("skills", "0001_initial")]

    operations = add_classification(
        "skill", constraint="skill_enforced_is_classified", historical_model="historicalskill"
    )
