"""A configuration's context strategy: stored with bounds, shown in admin."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from agents.models import AgentStep
from agents.services import run_create
from catalog.models import Configuration
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db


def test_a_new_configuration_drops_the_oldest_turns():
    configuration = configuration_make()
    assert (
        configuration.context_strategy,
        configuration.compaction_threshold,
        configuration.compaction_keep,
        configuration.summary_model,
    ) == ("drop_oldest", 0.8, 2, None)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("context_strategy", "forget"),
        ("compaction_threshold", 0.0),
        ("compaction_threshold", 1.5),
        ("compaction_keep", 0),
    ],
)
def test_strategy_fields_out_of_bounds_are_refused_naming_the_field(field, value):
    configuration = configuration_make()
    setattr(configuration, field, value)
    with pytest.raises(ValidationError) as raised:
        configuration.full_clean()
    assert list(raised.value.message_dict) == [field]
    configuration.refresh_from_db()
    assert getattr(configuration, field) == Configuration._meta.get_field(field).default


def test_the_admin_form_edits_the_strategy(admin_client):
    configuration = configuration_make()
    page = admin_client.get(f"/admin/catalog/configuration/{configuration.pk}/change/").content.decode()
    for name in ("context_strategy", "compaction_threshold", "compaction_keep", "summary_model"):
        assert f'name="{name}"' in page
    assert '<option value="summarise">Summarise older turns</option>' in page


def test_the_step_page_shows_a_compaction_record(admin_client):
    run = run_create(configuration=configuration_make(), input_text="Go.", input_data_class="public_content")
    record = {"strategy": "clear_tool_results", "cleared": [{"position": 1, "tool": "lookup", "tokens": 812}]}
    step = AgentStep.objects.create(
        run=run,
        index=0,
        kind="compaction",
        status="completed",
        usage_provenance="unavailable",
        compaction=record,
    )
    page = admin_client.get(f"/admin/agents/agentstep/{step.pk}/change/").content.decode()
    assert "Compaction" in page
    assert "clear_tool_results" in page
    assert "812" in page
