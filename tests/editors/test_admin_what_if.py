"""The what-if page before a governance change in admin: shown instead of saving when the change has an
effect, nothing saved until confirmed, the save (and its event) as before once confirmed."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages

from catalog.models import ApiClient, Configuration, LlmModel, Provider
from catalog.services import api_client_create
from editors.admin.what_if_page import CONFIRM_FIELD, NO_EFFECT
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Decision, TrustZone
from skills.models import Skill
from snippets.models import Snippet
from tests import factories
from tests.editor_accounts import editor_make

pytestmark = pytest.mark.django_db

CONFIGURATIONS = "/admin/catalog/configuration/"


@pytest.fixture
def world():
    """``newsletter`` (external_global, used by ``crm``) and ``handbook`` (external_eu) select ``tone``."""
    factories.snippet_make(identifier="tone", tags=("tone",))
    newsletter = factories.configuration_make(
        identifier="newsletter", zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"]
    )
    eu = factories.provider_make(identifier="eu", trust_zone=TrustZone.EXTERNAL_EU)
    factories.configuration_make(
        identifier="handbook", model=factories.model_make(provider=eu), snippet_tags=["tone"]
    )
    api_client_create(
        name="crm", scopes=["runs:create"], configurations=[newsletter], trust_zone=TrustZone.EXTERNAL_GLOBAL
    )
    return eu


def change_url(row: Any) -> str:
    return f"/admin/{row._meta.app_label}/{row._meta.model_name}/{row.pk}/change/"


def form_post(client, row: Any, **changes: Any) -> dict[str, Any]:
    """What the change form of ``row`` posts as shown, with ``changes``."""
    response = client.get(change_url(row))
    data: dict[str, Any] = {}
    for field in response.context["adminform"].form:
        value = field.value()
        if value is not None and value is not False:
            data[field.html_name] = "on" if value is True else value
    for inline in response.context["inline_admin_formsets"]:
        for field in inline.formset.management_form:
            data[field.html_name] = field.value()
    return {**data, "_save": "Save", **changes}


def sends(response) -> list[tuple[str, str, str, str]]:
    return [
        (e.configuration, e.client, str(e.before), str(e.after)) for e in response.context["effect"].sends
    ]


def confirm(client, row: Any, posted: dict[str, Any], page) -> int:
    """Post ``posted`` again with the confirmation of the effect ``page`` showed; the status."""
    return client.post(change_url(row), {**posted, CONFIRM_FIELD: page.context["effect"].digest}).status_code


def classification(snippet: Snippet) -> tuple[str, str]:
    return Snippet.objects.values_list("data_class", "ceiling").get(pk=snippet.pk)


def test_a_stricter_snippet_class_shows_what_it_refuses_and_saves_only_when_confirmed(admin_client, world):
    tone = Snippet.objects.get(identifier="tone")
    posted = form_post(admin_client, tone, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU)

    page = admin_client.post(change_url(tone), posted)

    assert page.status_code == 200
    assert page.templates[0].name == "admin/editors/what_if.html"
    assert page.context["title"] == (
        "What if: tone: data class Public content → Source code, ceiling External (global) → External (EU)"
    )
    assert sends(page) == [
        ("newsletter", "", "allowed", "refused"),
        ("newsletter", "crm", "allowed", "refused"),
    ]
    assert classification(tone) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    assert GovernanceEvent.objects.count() == 0
    digest = page.context["effect"].digest
    html = page.content.decode()
    assert f'<input type="hidden" name="{CONFIRM_FIELD}" value="{digest}">' in html
    assert f'<a href="{change_url(tone)}" id="what-if-cancel"' in html

    saved = admin_client.post(change_url(tone), {**posted, CONFIRM_FIELD: digest})

    assert (saved.status_code, saved["Location"]) == (302, "/admin/snippets/snippet/")
    assert classification(tone) == (DataClass.SOURCE_CODE, TrustZone.EXTERNAL_EU)
    event = GovernanceEvent.objects.get()
    assert (event.decision, event.source_identifier) == (Decision.RECLASSIFIED, "tone")


def test_a_confirmation_of_an_effect_that_has_changed_shows_the_page_again(admin_client, world):
    tone = Snippet.objects.get(identifier="tone")
    posted = form_post(admin_client, tone, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU)
    digest = admin_client.post(change_url(tone), posted).context["effect"].digest
    ApiClient.objects.get(name="crm").configurations.clear()

    page = admin_client.post(change_url(tone), {**posted, CONFIRM_FIELD: digest})

    assert (page.status_code, page.context["stale"]) == (200, True)
    assert sends(page) == [("newsletter", "", "allowed", "refused")]
    assert 'id="what-if-stale"' in page.content.decode()
    assert classification(tone) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    assert GovernanceEvent.objects.count() == 0


def test_a_change_without_effect_is_saved_at_once_and_says_so(admin_client, world):
    tone = Snippet.objects.get(identifier="tone")
    posted = form_post(admin_client, tone, data_class=DataClass.EDITOR_CONTENT)

    response = admin_client.post(change_url(tone), posted)

    assert response.status_code == 302
    assert classification(tone) == (DataClass.EDITOR_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    assert NO_EFFECT in [str(message) for message in get_messages(response.wsgi_request)]
    assert GovernanceEvent.objects.get().source_identifier == "tone"


def test_an_invalid_form_is_answered_by_the_form_not_the_page(admin_client, world):
    tone = Snippet.objects.get(identifier="tone")
    posted = form_post(admin_client, tone, data_class=DataClass.SOURCE_CODE, ceiling="", name="")

    response = admin_client.post(change_url(tone), posted)

    assert response.status_code == 200
    assert "effect" not in response.context
    assert set(response.context["adminform"].form.errors) == {"name", "ceiling"}
    assert classification(tone) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)


def test_a_stricter_skill_ceiling_asks_first(admin_client, world, tmp_path):
    skill = factories.skill_make(tmp_path, name="house-style")
    factories.configuration_skills_set(Configuration.objects.get(identifier="handbook"), [skill])
    posted = form_post(admin_client, skill, ceiling=TrustZone.PRIVATE_HOSTED)

    page = admin_client.post(change_url(skill), posted)

    assert sends(page) == [("handbook", "", "allowed", "refused")]
    assert Skill.objects.get(pk=skill.pk).ceiling == TrustZone.EXTERNAL_GLOBAL
    assert confirm(admin_client, skill, posted, page) == 302
    assert Skill.objects.get(pk=skill.pk).ceiling == TrustZone.PRIVATE_HOSTED


def test_a_provider_zone_change_asks_first(admin_client, world):
    posted = form_post(admin_client, world, trust_zone=TrustZone.EXTERNAL_GLOBAL)
    Snippet.objects.filter(identifier="tone").update(data_class=DataClass.SOURCE_CODE, ceiling="external_eu")

    page = admin_client.post(change_url(world), posted)

    assert page.context["title"] == "What if: eu: trust zone External (EU) → External (global)"
    assert sends(page) == [("handbook", "", "allowed", "refused")]
    assert Provider.objects.get(pk=world.pk).trust_zone == TrustZone.EXTERNAL_EU
    assert confirm(admin_client, world, posted, page) == 302
    assert Provider.objects.get(pk=world.pk).trust_zone == TrustZone.EXTERNAL_GLOBAL


def test_a_client_zone_change_that_changes_no_verdict_is_saved_at_once(admin_client, world):
    crm = ApiClient.objects.get(name="crm")
    Snippet.objects.filter(identifier="tone").update(data_class=DataClass.INTERNAL_CONFIGURATION)
    posted = form_post(admin_client, crm, trust_zone=TrustZone.EXTERNAL_EU)

    response = admin_client.post(change_url(crm), posted)

    # newsletter's own zone (external_global) refuses the snippet before and after: no change there.
    assert response.status_code == 302
    assert ApiClient.objects.get(pk=crm.pk).trust_zone == TrustZone.EXTERNAL_EU


def test_a_client_moved_to_a_less_trusted_zone_asks_first(admin_client, world):
    crm = ApiClient.objects.get(name="crm")
    crm.configurations.add(Configuration.objects.get(identifier="handbook"))
    crm.trust_zone = TrustZone.EXTERNAL_EU
    crm.save()
    Snippet.objects.filter(identifier="tone").update(data_class=DataClass.INTERNAL_CONFIGURATION)
    posted = form_post(admin_client, crm, trust_zone=TrustZone.EXTERNAL_GLOBAL)

    page = admin_client.post(change_url(crm), posted)

    assert sends(page) == [("handbook", "crm", "allowed", "refused")]
    assert ApiClient.objects.get(pk=crm.pk).trust_zone == TrustZone.EXTERNAL_EU


def test_a_declassification_asks_first_then_declassifies_and_records_it(admin_client, world):
    handbook = Configuration.objects.get(identifier="handbook")
    handbook.api_clients.add(ApiClient.objects.get(name="crm"))
    Snippet.objects.filter(identifier="tone").update(data_class=DataClass.INTERNAL_CONFIGURATION)
    action = {"action": "declassify_answers_to_external_global", "_selected_action": [str(handbook.pk)]}

    page = admin_client.post(CONFIGURATIONS, action)

    assert page.context["title"] == "What if: answers of handbook deliverable to External (global)"
    assert sends(page) == [("handbook", "crm", "refused", "allowed")]
    assert Configuration.objects.get(pk=handbook.pk).answers_deliverable_to == ""
    assert GovernanceEvent.objects.count() == 0

    done = admin_client.post(CONFIGURATIONS, {**action, CONFIRM_FIELD: page.context["effect"].digest})

    assert done.status_code == 302
    assert Configuration.objects.get(pk=handbook.pk).answers_deliverable_to == TrustZone.EXTERNAL_GLOBAL
    assert GovernanceEvent.objects.get().decision == Decision.RECLASSIFIED


def test_a_model_moved_to_a_provider_in_another_zone_asks_first(admin_client, world):
    Snippet.objects.filter(identifier="tone").update(data_class=DataClass.SOURCE_CODE, ceiling="external_eu")
    model = Configuration.objects.get(identifier="handbook").model
    elsewhere = factories.provider_make(identifier="global", trust_zone=TrustZone.EXTERNAL_GLOBAL)
    posted = form_post(admin_client, model, provider=str(elsewhere.pk))

    page = admin_client.post(change_url(model), posted)

    assert page.context["title"] == (
        f"What if: {model.model_id}: provider eu (External (EU)) → global (External (global))"
    )
    assert (sends(page), LlmModel.objects.get(pk=model.pk).provider_id) == (
        [("handbook", "", "allowed", "refused")],
        world.pk,
    )
    assert (confirm(admin_client, model, posted, page), LlmModel.objects.get(pk=model.pk).provider_id) == (
        302,
        elsewhere.pk,
    )


def test_a_stricter_configuration_prompt_asks_first_and_goes_live_on_confirmation(admin_client, world):
    newsletter = Configuration.objects.get(identifier="newsletter")
    posted = form_post(
        admin_client, newsletter, system_prompt_data_class=DataClass.INTERNAL_CONFIGURATION,
        system_prompt_ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip

    page = admin_client.post(change_url(newsletter), posted)

    assert page.context["title"] == (
        "What if: newsletter: data class Public content → Internal configuration, "
        "ceiling External (global) → External (EU)"
    )
    assert sends(page) == [
        ("newsletter", "", "allowed", "refused"),
        ("newsletter", "crm", "allowed", "refused"),
    ]
    assert GovernanceEvent.objects.count() == 0
    assert confirm(admin_client, newsletter, posted, page) == 302
    live = Configuration.objects.get(pk=newsletter.pk)
    assert (live.system_prompt_data_class, live.system_prompt_ceiling) == (
        "internal_configuration",
        "external_eu",
    )
    assert GovernanceEvent.objects.get().source_identifier == "newsletter"


def test_reverting_a_snippet_to_a_stricter_version_asks_first(admin_client, world):
    tone = Snippet.objects.get(identifier="tone")
    version = Snippet.history.filter(id=tone.pk).latest("history_id").history_id
    posted = form_post(admin_client, tone, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU)
    revert = f"/admin/snippets/snippet/{tone.pk}/history/{version}/"

    page = admin_client.post(revert, posted)

    assert sends(page) == [
        ("newsletter", "", "allowed", "refused"),
        ("newsletter", "crm", "allowed", "refused"),
    ]
    assert classification(tone) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    done = admin_client.post(revert, {**posted, CONFIRM_FIELD: page.context["effect"].digest})
    assert (done.status_code, classification(tone)) == (302, (DataClass.SOURCE_CODE, TrustZone.EXTERNAL_EU))


def test_a_user_who_may_not_change_a_provider_gets_no_page_and_changes_nothing(client, admin_client, world):
    posted = form_post(admin_client, world, trust_zone=TrustZone.LOCAL)
    client.force_login(editor_make())

    response = client.post(change_url(world), posted)

    assert (response.status_code, "effect" in (response.context or {})) == (403, False)
    assert Provider.objects.get(pk=world.pk).trust_zone == TrustZone.EXTERNAL_EU


@pytest.mark.parametrize(
    "action", ["clear_answers_declassification", "declassify_answers_to_external_global"]
)
def test_a_user_who_may_not_change_a_configuration_cannot_declassify_or_clear_it(client, world, action):
    handbook = Configuration.objects.get(identifier="handbook")
    Configuration.objects.filter(pk=handbook.pk).update(answers_deliverable_to=TrustZone.EXTERNAL_EU)
    viewer = editor_make()  # may view configurations, not change them
    viewer.user_permissions.add(Permission.objects.get(codename="reclassify"))
    client.force_login(viewer)

    response = client.post(CONFIGURATIONS, {"action": action, "_selected_action": [str(handbook.pk)]})

    # The changelist, offering no action to this user, and nothing done.
    assert (response.status_code, response.context["action_form"]) == (200, None)
    assert action.encode() not in response.content
    assert Configuration.objects.get(pk=handbook.pk).answers_deliverable_to == TrustZone.EXTERNAL_EU
    assert GovernanceEvent.objects.count() == 0


def test_a_user_who_may_change_a_configuration_may_clear_its_declassification_recorded(client, world):
    handbook = Configuration.objects.get(identifier="handbook")
    Configuration.objects.filter(pk=handbook.pk).update(answers_deliverable_to=TrustZone.EXTERNAL_EU)
    changer = editor_make()
    changer.user_permissions.add(Permission.objects.get(codename="change_configuration"))
    client.force_login(changer)

    action = {"action": "clear_answers_declassification", "_selected_action": [str(handbook.pk)]}
    response = client.post(CONFIGURATIONS, action)

    assert response.status_code == 302
    assert Configuration.objects.get(pk=handbook.pk).answers_deliverable_to == ""
    event = GovernanceEvent.objects.get()
    assert (event.decision, event.configuration, event.reason) == (
        Decision.RECLASSIFIED,
        "handbook",
        "answers deliverable to external_eu -> (their label) by user:editor",
    )
