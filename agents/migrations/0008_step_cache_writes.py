"""Prompt tokens a step wrote to the provider's cache (Anthropic's cache creation), and the run's total."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0007_llmmodel_capabilities"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentrun",
            name="cache_write_tokens_total",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="agentstep",
            name="cache_write_tokens",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
