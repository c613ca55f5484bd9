"""The ``editors`` group from the data migration: exactly what editors need in admin, nothing more."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from tests.editor_accounts import editor_make
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db

EXPECTED = [
    "agents.view_agentrun",
    "agents.view_agentstep",
    "catalog.publish_configuration",
    "catalog.view_configuration",
    "catalog.view_configurationfallback",
    "evaluations.add_evaluationcase",
    "evaluations.change_evaluationcase",
    "evaluations.delete_evaluationcase",
    "evaluations.run_evaluation",
    "evaluations.view_evaluation",
    "evaluations.view_evaluationcase",
    "evaluations.view_evaluationresult",
    "governance.view_governanceevent",
    "governance.view_publication",
    "governance.view_readiness_report",
    "skills.change_skill",
    "skills.view_historicalskill",
    "skills.view_skill",
    "skills.view_skillsource",
    "snippets.add_snippet",
    "snippets.add_tag",
    "snippets.change_snippet",
    "snippets.change_tag",
    "snippets.delete_snippet",
    "snippets.delete_tag",
    "snippets.publish_snippet",
    "snippets.view_historicalsnippet",
    "snippets.view_snippet",
    "snippets.view_tag",
]


def test_the_migration_created_the_group_with_exactly_these_permissions():
    group = Group.objects.get(name="editors")
    granted = sorted(f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all())
    assert granted == EXPECTED


@pytest.mark.parametrize(
    "url",
    [
        "/admin/catalog/provider/",
        "/admin/catalog/llmmodel/",
        "/admin/catalog/apiclient/",
        "/admin/catalog/provider/add/",
    ],
)
def test_editors_are_refused_providers_models_and_api_clients(client, url):
    client.force_login(editor_make())
    assert client.get(url).status_code == 403


@pytest.mark.parametrize(
    "url",
    [
        "/admin/snippets/snippet/", "/admin/snippets/snippet/add/", "/admin/snippets/tag/add/",
        "/admin/skills/skill/", "/admin/skills/skillsource/", "/admin/catalog/configuration/",
        "/admin/agents/agentrun/", "/admin/governance/governanceevent/",
        "/admin/governance/governanceevent/readiness/",
    ],
)  # fmt: skip
def test_editors_open_their_pages(client, url):
    configuration_make()
    client.force_login(editor_make())
    assert client.get(url).status_code == 200


def test_editors_see_configurations_read_only(client):
    configuration = configuration_make()
    client.force_login(editor_make())
    html = client.get(f"/admin/catalog/configuration/{configuration.pk}/change/").content.decode()
    assert 'name="_save"' not in html
    assert client.get("/admin/skills/skillsource/add/").status_code == 403
