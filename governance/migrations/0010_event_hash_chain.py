"""The governance log becomes hash-chained (docs/decisions/0017-governance-log-hash-chain.md).

Events written before the chain are linked into chain 0 in id order, each with its digest, so an
upgraded database verifies; their times are kept as stored. On PostgreSQL the append-only trigger is
disabled for the backfill alone (within this migration's transaction) and enabled again. The anchors
are append-only as the events are.
"""

import django.utils.timezone
from django.db import migrations, models

from governance.chain.canonical import EVENT_FIELDS, GENESIS, event_digest, log_key
from governance.migration_operations import append_only_trigger

EVENTS = "governance_governanceevent"
TRIGGER = f"{EVENTS}_append_only"
BATCH = 1000


def backfill(apps, schema_editor):
    Event = apps.get_model("governance", "GovernanceEvent")
    Head = apps.get_model("governance", "GovernanceLogHead")
    if not Event.objects.exists():
        return
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:
        schema_editor.execute(f"ALTER TABLE {EVENTS} DISABLE TRIGGER {TRIGGER}")
    key, seq, prev, batch = log_key(), 0, GENESIS, []
    for event in Event.objects.order_by("id").iterator(chunk_size=BATCH):
        seq += 1
        event.chain, event.seq, event.prev_hash = 0, seq, prev
        event.hash = prev = event_digest({name: getattr(event, name) for name in EVENT_FIELDS}, key)
        batch.append(event)
        if len(batch) == BATCH:
            Event.objects.bulk_update(batch, ["chain", "seq", "prev_hash", "hash"])
            batch = []
    Event.objects.bulk_update(batch, ["chain", "seq", "prev_hash", "hash"])
    Head.objects.create(chain=0, seq=seq, hash=prev)
    if postgres:
        schema_editor.execute(f"ALTER TABLE {EVENTS} ENABLE TRIGGER {TRIGGER}")


class Migration(migrations.Migration):
    dependencies = [("governance", "0009_publication_version")]

    operations = [
        migrations.AlterField(
            model_name="governanceevent",
            name="created_at",
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now, editable=False),
        ),
        migrations.AddField(
            model_name="governanceevent",
            name="chain",
            field=models.PositiveSmallIntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="governanceevent",
            name="seq",
            field=models.PositiveBigIntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="governanceevent",
            name="prev_hash",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="governanceevent",
            name="hash",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.CreateModel(
            name="GovernanceLogHead",
            fields=[
                ("chain", models.PositiveSmallIntegerField(primary_key=True, serialize=False)),
                ("seq", models.PositiveBigIntegerField(default=0)),
                ("hash", models.CharField(max_length=64)),
            ],
        ),
        migrations.CreateModel(
            name="GovernanceAnchor",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveBigIntegerField(unique=True)),
                (
                    "created_at",
                    models.DateTimeField(db_index=True, default=django.utils.timezone.now, editable=False),
                ),
                ("heads", models.JSONField()),
                ("prev_hash", models.CharField(max_length=64)),
                ("hash", models.CharField(max_length=64)),
            ],
            options={"ordering": ["-seq"]},
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="governanceevent",
            name="chain",
            field=models.PositiveSmallIntegerField(editable=False),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="seq",
            field=models.PositiveBigIntegerField(editable=False),
        ),
        migrations.AddConstraint(
            model_name="governanceevent",
            constraint=models.UniqueConstraint(fields=("chain", "seq"), name="governanceevent_chain_seq"),
        ),
        append_only_trigger("governance_governanceanchor"),
    ]
