"""Rows that predate classification observe; rows created afterwards enforce and need a class."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from tests.migration_helpers import migrate_to, migrate_to_latest

BEFORE = [("agents", "0001_initial")]
AFTER = [("agents", "0002_configuration_prompt_classification")]


@pytest.mark.django_db(transaction=True)
def test_existing_configurations_become_observe_and_new_ones_enforce():
    old_apps = migrate_to(BEFORE)
    Provider = old_apps.get_model("agents", "Provider")
    LlmModel = old_apps.get_model("agents", "LlmModel")
    Configuration = old_apps.get_model("agents", "Configuration")
    provider = Provider.objects.create(identifier="p", name="P", kind="local", trust_zone="local")
    model = LlmModel.objects.create(
        provider=provider, model_id="m", context_window=8192, max_output_tokens=1024, tokenizer="o200k_base"
    )
    Configuration.objects.create(identifier="legacy", name="Legacy", model=model, system_prompt="Old prompt")

    new_apps = migrate_to(AFTER)
    Configuration = new_apps.get_model("agents", "Configuration")
    legacy = Configuration.objects.get(identifier="legacy")
    assert (
        legacy.system_prompt_enforcement,
        legacy.system_prompt_data_class,
        legacy.system_prompt_ceiling,
    ) == (
        "observe",
        "",
        "",
    )

    fresh = Configuration(identifier="fresh", name="Fresh", model_id=legacy.model_id, system_prompt="New")
    assert fresh.system_prompt_enforcement == "enforce"
    with pytest.raises(IntegrityError), transaction.atomic():
        fresh.save()
    assert not Configuration.objects.filter(identifier="fresh").exists()

    fresh.system_prompt_data_class = "public_content"
    fresh.system_prompt_ceiling = "external_global"
    fresh.save()
    assert Configuration.objects.get(identifier="fresh").system_prompt_enforcement == "enforce"
    migrate_to_latest()
