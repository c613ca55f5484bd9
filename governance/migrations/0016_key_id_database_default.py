"""The key id columns get a database default (empty), so that the release step is safe while processes
of a release before key ids (0015) still serve: their inserts name no ``key_id``, and without a
default PostgreSQL refused them (NOT NULL), so their sends that record an event were refused until
they stopped. Their rows carry no id and verify under any configured key. On PostgreSQL this sets a
column default (no row is rewritten, the append-only trigger is untouched); on SQLite the table is
rebuilt, as 0015 did (the embedded default upgrades with its server stopped)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0015_log_key_ids"),
    ]

    operations = [
        migrations.AlterField(
            model_name="governanceanchor",
            name="key_id",
            field=models.CharField(default="", blank=True, db_default="", editable=False, max_length=16),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="key_id",
            field=models.CharField(default="", blank=True, db_default="", editable=False, max_length=16),
        ),
    ]
