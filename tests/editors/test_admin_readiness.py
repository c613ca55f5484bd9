"""The readiness page: observed rows per configuration and zone, and one-click promotion of safe rows."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User

from catalog.models import Configuration
from governance.chain.writes import event_append
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill
from snippets.models import Snippet
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, configuration_skills_set, skill_make, snippet_make

pytestmark = pytest.mark.django_db

PAGE = "/admin/governance/governanceevent/readiness/"
PROMOTE = "/admin/governance/governanceevent/readiness/promote/"


@pytest.fixture
def observed():
    """`safe` is sent by two configurations and fits both; `risky` is refused for the external one."""
    snippet_make(identifier="safe", tags=("house",), enforcement=Enforcement.OBSERVE)
    snippet_make(
        identifier="risky", tags=("house",), enforcement=Enforcement.OBSERVE,
        data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip
    configuration_make(identifier="internal", zone=TrustZone.LOCAL, snippet_tags=["house"])
    configuration_make(identifier="public", zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["house"])


def test_page_lists_rows_and_offers_promotion_only_where_nothing_would_be_refused(admin_client, observed):
    response = admin_client.get(PAGE)
    assert response.status_code == 200
    rows = [
        (s.row.identifier, s.row.configuration, s.row.would_be, s.promotable)
        for s in response.context["rows"]
    ]
    assert rows == [
        ("risky", "internal", "allowed", False),
        ("risky", "public", "refused", False),
        ("safe", "internal", "allowed", True),
        ("safe", "public", "allowed", True),
    ]
    html = response.content.decode()
    assert html.count('value="Promote to enforce"') == 2
    assert "refused for public: reclassify or change the model first" in html
    assert "2 observed source(s); 1 row(s) would be refused under enforcement." in html
    assert '<span class="outcome outcome-refused">Refused</span>' in html  # labels, not stored values
    assert "<td>Snippet</td>" in html and ">refused<" not in html and ">snippet<" not in html


def test_promoting_a_safe_snippet_enforces_it_with_history_and_log(admin_client, admin_user, observed):
    response = admin_client.post(PROMOTE, {"kind": "snippet", "identifier": "safe"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == ["Promoted: safe."]
    assert dict(Snippet.objects.values_list("identifier", "enforcement")) == {
        "safe": "enforce",
        "risky": "observe",
    }
    safe = Snippet.objects.get(identifier="safe")
    latest = safe.history.latest("history_date")
    assert (latest.history_user, latest.history_change_reason) == (admin_user, "promoted to enforce")
    assert list(LogEntry.objects.values_list("object_repr", "change_message")) == [
        (str(safe), "Promoted to enforce from the readiness report.")
    ]


def test_a_row_that_would_be_refused_is_never_promoted(admin_client, observed):
    response = admin_client.post(PROMOTE, {"kind": "snippet", "identifier": "risky"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Not promoted risky: enforcement would refuse it for public."
    ]
    assert Snippet.objects.get(identifier="risky").enforcement == Enforcement.OBSERVE
    assert LogEntry.objects.count() == 0


def test_promoting_a_configuration_prompt_and_a_skill(admin_client, tmp_path):
    skill = skill_make(tmp_path, enforcement=Enforcement.OBSERVE)
    configuration = configuration_make(identifier="legacy", system_prompt_enforcement=Enforcement.OBSERVE)
    configuration_skills_set(configuration, [skill])

    admin_client.post(PROMOTE, {"kind": "system_prompt", "identifier": "legacy"})
    admin_client.post(PROMOTE, {"kind": "skill", "identifier": skill.identifier})

    assert Configuration.objects.get(identifier="legacy").system_prompt_enforcement == Enforcement.ENFORCE
    assert Skill.objects.get(pk=skill.pk).enforcement == Enforcement.ENFORCE
    assert sorted(LogEntry.objects.values_list("content_type__model", flat=True)) == [
        "configuration",
        "skill",
    ]


def test_an_enforced_source_is_not_promoted_again(admin_client, observed):
    response = admin_client.post(PROMOTE, {"kind": "snippet", "identifier": "nope"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == ["nope is not an observed source any more."]


def test_promotion_needs_post_and_a_known_kind(admin_client, observed):
    assert admin_client.get(PROMOTE).status_code == 405
    assert admin_client.post(PROMOTE, {"kind": "tool_output", "identifier": "x"}).status_code == 403


def test_editors_view_the_page_but_cannot_promote_configurations(client):
    configuration_make(identifier="legacy", system_prompt_enforcement=Enforcement.OBSERVE)
    client.force_login(editor_make())
    response = client.get(PAGE)
    assert response.status_code == 200
    assert [s.promotable for s in response.context["rows"]] == [False]
    assert client.post(PROMOTE, {"kind": "system_prompt", "identifier": "legacy"}).status_code == 403
    assert Configuration.objects.get(identifier="legacy").system_prompt_enforcement == Enforcement.OBSERVE


def test_editors_can_promote_snippets(client, observed):
    client.force_login(editor_make())
    client.post(PROMOTE, {"kind": "snippet", "identifier": "safe"})
    assert Snippet.objects.get(identifier="safe").enforcement == Enforcement.ENFORCE


def test_staff_without_the_readiness_permission_get_403_and_others_the_login(client):
    staff = User.objects.create_user(username="staff", is_staff=True)
    client.force_login(staff)
    assert client.get(PAGE).status_code == 403
    client.logout()
    response = client.get(PAGE)
    assert (response.status_code, response["Location"].split("?")[0]) == (302, "/admin/login/")


def test_event_list_filters_by_configuration_and_links_the_report(admin_client):
    for configuration in ("alpha", "beta"):
        event_append(GovernanceEvent(
            correlation_id="c", decision="context_blocked", outcome="enforced", source_kind="snippet",
            source_identifier=f"{configuration}-snippet", configuration=configuration,
        ))  # fmt: skip
    response = admin_client.get("/admin/governance/governanceevent/", {"configuration": "beta"})
    assert [e.source_identifier for e in response.context["cl"].result_list] == ["beta-snippet"]
    assert f'<a href="{PAGE}">Readiness report</a>' in response.content.decode()
    query = {
        "decision__exact": "context_blocked",
        "outcome__exact": "enforced",
        "source_kind__exact": "snippet",
    }
    assert len(admin_client.get("/admin/governance/governanceevent/", query).context["cl"].result_list) == 2
