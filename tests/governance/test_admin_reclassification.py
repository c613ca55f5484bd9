"""In admin, editors tighten classifications; declassifying needs governance.reclassify; new rows enforce."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from catalog.models import Configuration
from governance.models import Draft, GovernanceEvent, Publication
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill
from snippets.models import Snippet
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, skill_make, snippet_make

pytestmark = pytest.mark.django_db

RELAX = (
    "Relaxing enforce to observe needs the governance:classify scope or the governance.reclassify permission."
)
LOWER = "Lowering the data class needs the governance:classify scope or the governance.reclassify permission."
LOOSEN = "Loosening the trust-zone ceiling needs the governance:classify scope or the governance.reclassify permission."


def snippet_form(snippet: Snippet, **changes: str) -> dict[str, str]:
    form = {
        "identifier": snippet.identifier, "name": snippet.name, "description": snippet.description,
        "text": snippet.text, "tag_names": "", "is_active": "on", "sorting": "0",
        "data_class": snippet.data_class, "ceiling": snippet.ceiling, "enforcement": snippet.enforcement,
        "metadata": "{}",
    }  # fmt: skip
    return {**form, **changes}


def stored(snippet: Snippet) -> tuple[object, ...]:
    row = Snippet.objects.get(pk=snippet.pk)
    return (
        row.text,
        row.data_class,
        row.ceiling,
        row.enforcement,
        Snippet.history.filter(id=snippet.pk).count(),
    )


def reclassifier(username: str = "lead") -> User:
    user = editor_make(username)
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="governance", codename="reclassify")
    )
    return User.objects.get(pk=user.pk)


def test_the_editors_group_does_not_hold_the_reclassify_permission():
    assert editor_make().has_perm("governance.reclassify") is False
    assert reclassifier().has_perm("governance.reclassify") is True


def test_an_editor_cannot_relax_a_snippet_to_observe(client):
    snippet = snippet_make(identifier="tone")
    before = stored(snippet)
    client.force_login(editor_make())

    response = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/change/",
        snippet_form(snippet, enforcement="observe", text="Changed on the way."),
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"enforcement": [RELAX]}
    assert stored(snippet) == before
    assert GovernanceEvent.objects.count() == 0


def test_an_editor_cannot_lower_a_snippets_class_or_loosen_its_ceiling(client):
    snippet = snippet_make(identifier="runbook", data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.LOCAL)
    before = stored(snippet)
    client.force_login(editor_make())

    response = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/change/",
        snippet_form(snippet, data_class="public_content", ceiling="external_global"),
    )

    assert response.context["adminform"].form.errors == {"data_class": [LOWER], "ceiling": [LOOSEN]}
    assert stored(snippet) == before
    assert GovernanceEvent.objects.count() == 0


def test_an_editor_tightens_a_snippet_and_the_change_is_recorded(client):
    snippet = snippet_make(identifier="tone")
    client.force_login(editor_make())

    response = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/change/",
        snippet_form(snippet, data_class="source_code", ceiling="local"),
    )

    assert response.status_code == 302
    assert Snippet.objects.values_list("data_class", "ceiling").get(pk=snippet.pk) == ("source_code", "local")
    event = GovernanceEvent.objects.get()
    assert (event.decision, event.source_identifier, event.api_client, event.reason) == (
        "reclassified",
        "tone",
        "",
        "public_content/external_global/enforce -> source_code/local/enforce by user:editor",
    )


def test_with_the_permission_a_user_declassifies_by_publishing_and_it_is_recorded(client):
    snippet = snippet_make(identifier="tone")
    client.force_login(reclassifier())

    response = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/change/", snippet_form(snippet, enforcement="observe")
    )

    assert response.status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).enforcement == Enforcement.ENFORCE  # a looser draft waits
    assert GovernanceEvent.objects.count() == 0
    assert client.post(f"/admin/snippets/snippet/{snippet.pk}/publish/").status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).enforcement == Enforcement.OBSERVE
    assert GovernanceEvent.objects.get().reason == (
        "public_content/external_global/enforce -> public_content/external_global/observe by user:lead"
    )


def test_an_editor_without_the_permission_cannot_publish_a_looser_draft(client):
    snippet = snippet_make(identifier="tone")
    client.force_login(reclassifier())
    client.post(f"/admin/snippets/snippet/{snippet.pk}/change/", snippet_form(snippet, enforcement="observe"))
    before = stored(snippet)
    client.force_login(editor_make())

    response = client.post(f"/admin/snippets/snippet/{snippet.pk}/publish/")

    assert response.status_code == 200
    assert response.context["error"] == (
        "Not published: snippet 'tone': Relaxing enforce to observe needs the governance:classify scope or the "
        "governance.reclassify permission."
    )
    assert stored(snippet) == before
    assert GovernanceEvent.objects.count() == 0
    assert Publication.objects.count() == 0
    assert Draft.objects.count() == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"enforcement": "observe"},
        {"enforcement": "observe", "data_class": "", "ceiling": ""},
    ],
)
def test_an_editor_creates_only_enforced_classified_snippets(client, changes):
    client.force_login(editor_make())
    form = {
        "identifier": "new", "name": "New", "description": "", "text": "Hello.", "tag_names": "tone",
        "is_active": "on", "sorting": "0", "data_class": "public_content", "ceiling": "external_global",
        "enforcement": "enforce", "metadata": "{}",
    }  # fmt: skip

    response = client.post("/admin/snippets/snippet/add/", {**form, **changes})

    assert response.status_code == 200
    assert "enforcement" in response.context["adminform"].form.errors
    assert Snippet.objects.count() == 0
    assert Snippet.history.count() == 0


def test_an_editor_cannot_restore_a_looser_version_from_history(client):
    snippet = snippet_make(identifier="tone")
    first = snippet.history.get()
    client.force_login(editor_make())
    tightened = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/change/",
        snippet_form(snippet, data_class="source_code", ceiling="external_eu"),
    )
    assert tightened.status_code == 302
    before = stored(snippet)

    response = client.post(
        f"/admin/snippets/snippet/{snippet.pk}/history/{first.history_id}/",
        snippet_form(snippet, data_class="public_content", ceiling="external_global"),
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"data_class": [LOWER], "ceiling": [LOOSEN]}
    assert stored(snippet) == before


def test_an_editor_cannot_relax_a_skill_to_observe(client, tmp_path):
    skill = skill_make(tmp_path)
    events = GovernanceEvent.objects.count()  # the factory classified the ingested skill
    versions = Skill.history.filter(id=skill.pk).count()
    client.force_login(editor_make())

    response = client.post(
        f"/admin/skills/skill/{skill.pk}/change/",
        {"data_class": skill.data_class, "ceiling": skill.ceiling, "enforcement": "observe"},
    )

    assert response.context["adminform"].form.errors == {"enforcement": [RELAX]}
    assert Skill.objects.get(pk=skill.pk).enforcement == Enforcement.ENFORCE
    assert Skill.history.filter(id=skill.pk).count() == versions
    assert GovernanceEvent.objects.count() == events


def configuration_form(configuration: Configuration, **changes: str) -> dict[str, str]:
    form = {
        "identifier": configuration.identifier, "name": configuration.name, "model": str(configuration.model_id),
        "is_active": "on", "snippet_tags": "[]", "system_prompt": configuration.system_prompt,
        "system_prompt_data_class": configuration.system_prompt_data_class,
        "system_prompt_ceiling": configuration.system_prompt_ceiling,
        "system_prompt_enforcement": configuration.system_prompt_enforcement,
        "max_iterations": "5", "context_usage_note": "off", "skill_list": "", "skill_mode": "full",
        "context_strategy": "drop_oldest", "compaction_threshold": "0.8", "compaction_keep": "2",
        "skill_trust_floor": "untrusted", "allowed_tool_groups": "[]", "allowed_tools": "[]",
        "fallback_links-TOTAL_FORMS": "0", "fallback_links-INITIAL_FORMS": "0",
        "fallback_links-MIN_NUM_FORMS": "0", "fallback_links-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    return {**form, **changes}


def test_a_configuration_prompt_is_declassified_only_with_the_permission(client, admin_client):
    configuration = configuration_make(
        identifier="assistant",
        system_prompt_data_class=DataClass.INTERNAL_CONFIGURATION,
        system_prompt_ceiling=TrustZone.EXTERNAL_EU,
    )
    operator = User.objects.create_user("operator", is_staff=True)
    operator.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="catalog", codename__in=["change_configuration", "view_configuration"]
        )
    )
    client.force_login(operator)
    url = f"/admin/catalog/configuration/{configuration.pk}/change/"
    looser = configuration_form(
        configuration, system_prompt_ceiling="external_global", system_prompt_data_class="editor_content"
    )

    refused = client.post(url, looser)

    assert refused.context["adminform"].form.errors == {
        "system_prompt_data_class": [LOWER],
        "system_prompt_ceiling": [LOOSEN],
    }
    assert Configuration.objects.values_list("system_prompt_data_class", "system_prompt_ceiling").get() == (
        "internal_configuration",
        "external_eu",
    )
    assert GovernanceEvent.objects.count() == 0

    assert admin_client.post(url, looser).status_code == 302
    assert GovernanceEvent.objects.count() == 0  # a looser draft waits for its publish
    assert admin_client.post(f"/admin/catalog/configuration/{configuration.pk}/publish/").status_code == 302

    assert Configuration.objects.values_list("system_prompt_data_class", "system_prompt_ceiling").get() == (
        "editor_content",
        "external_global",
    )
    event = GovernanceEvent.objects.get()
    assert (event.source_kind, event.source_identifier, event.reason) == (
        "system_prompt",
        "assistant",
        "internal_configuration/external_eu/enforce -> editor_content/external_global/enforce by user:admin",
    )


def test_a_new_configuration_enforces(admin_client):
    model = configuration_make().model
    form = configuration_form(
        Configuration(identifier="new", name="New", model=model, system_prompt="Help."),
        system_prompt_data_class="",
        system_prompt_ceiling="",
        system_prompt_enforcement="observe",
    )

    response = admin_client.post("/admin/catalog/configuration/add/", form)

    assert response.status_code == 200
    assert "system_prompt_enforcement" in response.context["adminform"].form.errors
    assert not Configuration.objects.filter(identifier="new").exists()


def declassify_answers(client, configuration: Configuration, zone: str) -> None:
    client.post(
        "/admin/catalog/configuration/",
        {"action": f"declassify_answers_to_{zone}", "_selected_action": [configuration.pk]},
    )


def test_an_editor_cannot_declassify_a_configurations_answers_and_a_reclassifier_can(client):
    configuration = configuration_make()
    client.force_login(editor_make())

    declassify_answers(client, configuration, "external_global")

    configuration.refresh_from_db()
    assert configuration.answers_deliverable_to == ""
    assert GovernanceEvent.objects.filter(decision="reclassified").count() == 0
    lead = reclassifier()  # who may also edit configurations: the actions need that too
    lead.user_permissions.add(Permission.objects.get(codename="change_configuration"))
    client.force_login(User.objects.get(pk=lead.pk))

    declassify_answers(client, configuration, "external_global")

    configuration.refresh_from_db()
    assert configuration.answers_deliverable_to == "external_global"
    event = GovernanceEvent.objects.get(decision="reclassified")
    assert (event.configuration, event.zone) == (configuration.identifier, "external_global")
    assert event.reason == "answers deliverable to (their label) -> external_global by user:lead"
