"""The anchors get a head, like every chain: one row naming the last anchor. An upgraded database's
head is set from its last anchor, so it verifies at once."""

from django.db import migrations, models


def head_from_last_anchor(apps, schema_editor):
    anchor = apps.get_model("governance", "GovernanceAnchor")
    head = apps.get_model("governance", "GovernanceAnchorHead")
    last = anchor.objects.order_by("-seq").values_list("seq", "hash").first()
    if last is not None:
        head.objects.create(id=1, seq=last[0], hash=last[1])


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0013_approval_events"),
    ]

    operations = [
        migrations.CreateModel(
            name="GovernanceAnchorHead",
            fields=[
                (
                    "id",
                    models.PositiveSmallIntegerField(
                        default=1, editable=False, primary_key=True, serialize=False
                    ),
                ),
                ("seq", models.PositiveBigIntegerField(default=0)),
                ("hash", models.CharField(max_length=64)),
            ],
        ),
        migrations.RunPython(head_from_last_anchor, migrations.RunPython.noop),
    ]
