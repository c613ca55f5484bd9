"""The governance event log in admin reads well: vocabulary values by their labels (in the list, its
filters and the detail page), and the sources and configurations it names linked where they exist."""

from __future__ import annotations

import re

import pytest

from governance.chain.writes import event_append
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.factories import configuration_make, skill_make, snippet_make

pytestmark = pytest.mark.django_db

LIST = "/admin/governance/governanceevent/"


def event(**fields) -> GovernanceEvent:
    values = {
        "correlation_id": "c1", "decision": "context_blocked", "outcome": "enforced",
        "data_class": DataClass.INTERNAL_CONFIGURATION, "ceiling": TrustZone.EXTERNAL_EU,
        "zone": TrustZone.EXTERNAL_GLOBAL,
    }  # fmt: skip
    return event_append(GovernanceEvent(**{**values, **fields}))


def test_the_list_shows_labels_not_stored_values(admin_client):
    event(source_kind="caller_context", source_identifier="context[0]")

    html = admin_client.get(LIST).content.decode()

    assert '<td class="field-data_class_label">Internal configuration</td>' in html
    assert '<td class="field-zone_label">External (global)</td>' in html
    assert '<td class="field-source">Caller context item context[0]</td>' in html
    assert '<td class="field-decision">Context blocked</td>' in html
    assert "internal_configuration" not in html.split('id="result_list"')[1].split("</table>")[0]


def test_the_filters_offer_the_vocabularys_labels_in_rank_order(admin_client):
    event()
    response = admin_client.get(LIST)
    filters = {spec.title: [choice["display"] for choice in spec.choices(response.context["cl"])]
               for spec in response.context["cl"].filter_specs}  # fmt: skip

    assert filters["data class"] == ["All", *[member.label for member in DataClass]]
    assert filters["zone"] == ["All", "Local", "Private hosted", "External (EU)", "External (global)"]


def test_a_filter_by_label_keeps_the_events_with_that_value(admin_client):
    kept = event(zone=TrustZone.EXTERNAL_EU)
    event(zone=TrustZone.LOCAL)

    response = admin_client.get(f"{LIST}?zone=external_eu")

    assert [row.pk for row in response.context["cl"].result_list] == [kept.pk]


def test_the_detail_page_shows_labels(admin_client):
    row = event(source_kind="task_input", source_identifier="input")
    html = admin_client.get(f"{LIST}{row.pk}/change/").content.decode()
    for label in ("Internal configuration", "External (EU)", "External (global)", "Task input input"):
        assert f'<div class="readonly">{label}</div>' in html, label
    assert "internal_configuration" not in html and "external_eu" not in html


def test_sources_and_configurations_link_to_their_admin_pages_where_the_row_exists(admin_client, tmp_path):
    snippet = snippet_make(identifier="tone-of-voice")
    skill = skill_make(tmp_path)
    configuration = configuration_make(identifier="newsletter")
    event(source_kind="snippet", source_identifier="tone-of-voice", configuration="newsletter")
    event(source_kind="skill", source_identifier=skill.identifier)
    event(source_kind="system_prompt", source_identifier="newsletter")
    event(source_kind="snippet", source_identifier="gone", configuration="retired")

    html = admin_client.get(LIST).content.decode()

    assert (
        f'<td class="field-source">Snippet <a href="/admin/snippets/snippet/{snippet.pk}/change/">'
        "tone-of-voice</a></td>"
    ) in html
    assert (
        f'<td class="field-source">Skill <a href="/admin/skills/skill/{skill.pk}/change/">{skill.identifier}</a></td>'
    ) in html
    assert (
        '<td class="field-source">Configuration system prompt '
        f'<a href="/admin/catalog/configuration/{configuration.pk}/change/">newsletter</a></td>'
    ) in html
    assert (
        f'<td class="field-configuration_link"><a href="/admin/catalog/configuration/{configuration.pk}/change/">'
        "newsletter</a></td>"
    ) in html
    assert '<td class="field-source">Snippet gone</td>' in html
    assert '<td class="field-configuration_link">retired</td>' in html


def test_the_detail_page_shows_the_events_link_in_its_chain(admin_client):
    row = event()
    row.refresh_from_db()
    html = admin_client.get(f"{LIST}{row.pk}/change/").content.decode()
    assert f'<div class="readonly">{row.hash}</div>' in html
    assert f'<div class="readonly">{row.prev_hash}</div>' in html
    assert f'<div class="readonly">{row.seq}</div>' in html


def test_an_events_page_has_a_readable_title_plain_labels_and_no_history(admin_client):
    logged = event(source_kind="snippet", source_identifier="incident-runbook", api_client="crm")
    page = f"{LIST}{logged.pk}/change/"

    response = admin_client.get(page)
    html = response.content.decode()

    assert "<h2>Context blocked (enforced): snippet incident-runbook</h2>" in html
    assert "<title>Context blocked (enforced): snippet incident-runbook | View governance event" in html
    assert "GovernanceEvent object" not in html and "context_blocked/enforced" not in html
    labels = [label.removesuffix(":") for label in re.findall(r"<label>([^<]+)</label>", html)]
    assert {
        "Recorded at", "Correlation ID", "API client", "Position in the chain", "Digest of the event before",
        "Digest",
    } <= set(labels)  # fmt: skip
    assert not {"Created at", "Correlation id", "Api client", "Seq", "Prev hash", "Hash"} & set(labels)
    assert "history/" not in html and ">History<" not in html
    assert admin_client.get(f"{page}history/").status_code == 404
    assert ">Save" not in html and "deletelink" not in html


def test_an_event_without_a_source_is_titled_by_its_decision():
    assert (
        str(GovernanceEvent(decision="budget_exhausted", outcome="enforced")) == "Budget exhausted (enforced)"
    )
