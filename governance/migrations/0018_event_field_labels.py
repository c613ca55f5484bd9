"""The event log's fields read as plain words in admin (labels only: no change to any column)."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0017_personal_data_decisions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="governanceevent",
            name="api_client",
            field=models.CharField(blank=True, max_length=100, verbose_name="API client"),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="correlation_id",
            field=models.CharField(db_index=True, max_length=64, verbose_name="correlation ID"),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="created_at",
            field=models.DateTimeField(
                db_index=True, default=django.utils.timezone.now, editable=False, verbose_name="recorded at"
            ),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="hash",
            field=models.CharField(editable=False, max_length=64, verbose_name="digest"),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="prev_hash",
            field=models.CharField(editable=False, max_length=64, verbose_name="digest of the event before"),
        ),
        migrations.AlterField(
            model_name="governanceevent",
            name="seq",
            field=models.PositiveBigIntegerField(editable=False, verbose_name="position in the chain"),
        ),
    ]
