"""Each event and anchor of the governance log records the id of the key that signed it
(docs/decisions/0033-governance-log-keys-have-ids.md). Rows written before have none and verify under
any configured key; adding the column rewrites no row, so the append-only triggers are untouched."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0014_governance_anchor_head"),
    ]

    operations = [
        migrations.AddField(
            model_name="governanceevent",
            name="key_id",
            field=models.CharField(blank=True, editable=False, max_length=16),
        ),
        migrations.AddField(
            model_name="governanceanchor",
            name="key_id",
            field=models.CharField(blank=True, editable=False, max_length=16),
        ),
    ]
