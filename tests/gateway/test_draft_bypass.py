"""No admin path puts unpublished text in use for an editor without the publish permission: "Save as
new", deleting and adding again, the add form, admin actions, the change list's editable fields and a
history revert (of a live row or of a deleted one). Each is posted through the real admin; afterwards
the live rows are unchanged or inactive, and a completion sends only published text."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from catalog.models import Configuration
from governance.models import Draft, Publication
from governance.vocabulary import TrustZone
from snippets.models import Snippet
from snippets.services import snippet_delete, snippet_save
from tests.agents.runs import fake_configuration
from tests.editor_accounts import editor_make, snippet_admin_form
from tests.factories import TEST_ACTOR, snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
SNIPPETS = "/admin/snippets/snippet"
CONFIGURATIONS = "/admin/catalog/configuration"
OLD, NEW = "Write warmly and briefly.", "Unpublished: promise every customer a refund."
PROMPT, NEW_PROMPT = "You write our newsletter.", "Unpublished: you may reveal internal prices."
CREATED_INACTIVE = (
    "Created inactive: publishing needs the publish permission, so the {} is not in use until its draft "
    "is published."
)


@pytest.fixture
def writer(client) -> User:
    """May add, change, delete and view snippets and configurations; may not publish."""
    user = editor_make("writer")
    user.groups.clear()
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label__in=["snippets", "catalog"],
            codename__in=[
                f"{verb}_{model}"
                for verb in ("add", "change", "delete", "view")
                for model in ("snippet", "configuration")
            ],
        )
    )
    client.force_login(user)
    assert not user.has_perm("snippets.publish_snippet") and not user.has_perm(
        "catalog.publish_configuration"
    )
    return user


@pytest.fixture
def live(fake_provider, make_caller):
    """A published snippet (tag ``tone``), a configuration selecting it, and a client using that."""
    snippet = snippet_make(identifier="tone-of-voice", name="Tone of voice", text=OLD, tags=("tone",))
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, system_prompt=PROMPT, snippet_tags=["tone"]
    )
    caller = make_caller("configurations:use", configurations=(configuration,))
    return snippet, configuration, caller


def sent_system_prompt(caller, configuration, fake_provider) -> str:
    fake_provider.script(Reply(text="Fine."))
    response = caller.post(
        CHAT, {"model": configuration.identifier, "messages": [{"role": "user", "content": "Hi"}]}
    )
    assert response.status_code == 200, response.content
    return fake_provider.bodies()[-1]["messages"][0]["content"]


def new_snippet_form(identifier: str, text: str = NEW) -> dict[str, str]:
    return snippet_admin_form(
        Snippet(identifier=identifier, name="Refunds", text=text, data_class="public_content",
                ceiling="external_global", enforcement="enforce")
    )  # fmt: skip


def assert_only_published_text_is_sent(caller, configuration, fake_provider) -> None:
    assert sent_system_prompt(caller, configuration, fake_provider) == f"{PROMPT}\n\nTone of voice:\n{OLD}"
    assert NEW not in fake_provider.wire_text() and NEW_PROMPT not in fake_provider.wire_text()
    assert Publication.objects.count() == 0


def assert_created_inactive_with_its_activation_drafted(row, response) -> None:
    assert row.is_active is False
    assert CREATED_INACTIVE.format(row._meta.verbose_name) in [str(m) for m in response.context["messages"]]
    draft = Draft.objects.get(object_id=str(row.pk))
    assert draft.values["is_active"] is True


def test_save_as_new_with_a_new_identifier_creates_an_inactive_copy(client, writer, live, fake_provider):
    snippet, configuration, caller = live
    form = {**snippet_admin_form(snippet, identifier="tone-copy", text=NEW), "_saveasnew": "Save as new"}

    response = client.post(f"{SNIPPETS}/{snippet.pk}/change/", form, follow=True)

    copy = Snippet.objects.get(identifier="tone-copy")
    assert copy.text == NEW
    assert_created_inactive_with_its_activation_drafted(copy, response)
    assert Snippet.objects.get(pk=snippet.pk).text == OLD
    assert_only_published_text_is_sent(caller, configuration, fake_provider)


def test_deleting_and_adding_again_creates_the_row_inactive(client, writer, live, fake_provider):
    snippet, configuration, caller = live
    # Deleting takes the row out of every send: the writer, who may not publish, may not.
    assert client.post(f"{SNIPPETS}/{snippet.pk}/delete/", {"post": "yes"}).status_code == 403
    snippet_delete(snippet=snippet, actor=TEST_ACTOR)

    response = client.post(f"{SNIPPETS}/add/", new_snippet_form("tone-of-voice"), follow=True)

    again = Snippet.objects.get(identifier="tone-of-voice")
    assert_created_inactive_with_its_activation_drafted(again, response)
    assert sent_system_prompt(caller, configuration, fake_provider) == PROMPT
    assert NEW not in fake_provider.wire_text()


def test_the_add_form_creates_the_row_inactive_and_an_inactive_row_is_never_selected(
    client, writer, live, fake_provider
):
    _, configuration, caller = live

    response = client.post(f"{SNIPPETS}/add/", new_snippet_form("refunds"), follow=True)

    assert_created_inactive_with_its_activation_drafted(Snippet.objects.get(identifier="refunds"), response)
    assert_only_published_text_is_sent(caller, configuration, fake_provider)


def test_a_new_configuration_is_inactive_and_answers_nothing(
    client, writer, live, fake_provider, make_caller
):
    _, configuration, _ = live
    form = {
        "identifier": "newsletter-2", "name": "Newsletter 2", "model": str(configuration.model_id),
        "is_active": "on", "snippet_tags": '["tone"]', "system_prompt": NEW_PROMPT,
        "system_prompt_data_class": "public_content", "system_prompt_ceiling": "external_global",
        "system_prompt_enforcement": "enforce", "max_iterations": "5", "context_usage_note": "off",
        "context_strategy": "drop_oldest", "compaction_threshold": "0.8", "compaction_keep": "2",
        "skill_list": "", "skill_mode": "full", "skill_trust_floor": "untrusted",
        "allowed_tool_groups": "[]", "allowed_tools": "[]",
        "fallback_links-TOTAL_FORMS": "0", "fallback_links-INITIAL_FORMS": "0",
        "fallback_links-MIN_NUM_FORMS": "0", "fallback_links-MAX_NUM_FORMS": "1000",
    }  # fmt: skip

    response = client.post(f"{CONFIGURATIONS}/add/", form, follow=True)

    created = Configuration.objects.get(identifier="newsletter-2")
    assert created.system_prompt == NEW_PROMPT
    assert_created_inactive_with_its_activation_drafted(created, response)
    caller = make_caller("configurations:use", configurations=(created,))
    refused = caller.post(CHAT, {"model": "newsletter-2", "messages": [{"role": "user", "content": "Hi"}]})
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "configuration_inactive")
    assert fake_provider.requests == []


def test_admin_actions_and_the_change_list_publish_nothing(client, writer, live, fake_provider):
    snippet, configuration, caller = live
    client.post(f"{SNIPPETS}/{snippet.pk}/change/", snippet_admin_form(snippet, text=NEW))
    changelist = client.get(f"{SNIPPETS}/")
    actions = [name for name, _ in changelist.context["action_form"].fields["action"].choices if name]
    assert actions == ["promote_to_enforce"]  # deleting needs the publish permission

    client.post(f"{SNIPPETS}/", {"action": "promote_to_enforce", "_selected_action": [snippet.pk]})
    client.post(
        f"{SNIPPETS}/",
        {"form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "form-0-id": str(snippet.pk), "form-0-text": NEW,
         "form-0-is_active": "on", "_save": "Save"},
    )  # fmt: skip

    assert Snippet.objects.get(pk=snippet.pk).text == OLD
    assert Draft.objects.get().values["text"] == NEW
    assert_only_published_text_is_sent(caller, configuration, fake_provider)


def test_a_history_revert_is_a_draft(client, writer, live, fake_provider):
    snippet, configuration, caller = live
    snippet.text = NEW
    snippet.is_active = False
    snippet_save(snippet=snippet, actor=TEST_ACTOR, reason="staged, switched off")
    snippet.text, snippet.is_active = OLD, True
    snippet_save(snippet=snippet, actor=TEST_ACTOR, reason="restored")
    staged = snippet.history.get(text=NEW)

    response = client.post(
        f"{SNIPPETS}/{snippet.pk}/history/{staged.history_id}/", snippet_admin_form(snippet, text=NEW)
    )

    assert response.status_code == 302
    assert Snippet.objects.get(pk=snippet.pk).text == OLD
    assert Draft.objects.get().values["text"] == NEW
    assert_only_published_text_is_sent(caller, configuration, fake_provider)


def test_reverting_a_deleted_row_recreates_it_inactive(client, writer, live, fake_provider):
    snippet, configuration, caller = live
    pk = snippet.pk
    snippet_delete(snippet=snippet, actor=TEST_ACTOR)  # by someone who may publish
    version = Snippet.history.filter(id=pk).earliest("history_date")

    response = client.post(
        f"{SNIPPETS}/{pk}/history/{version.history_id}/", snippet_admin_form(snippet, text=NEW), follow=True
    )

    recreated = Snippet.objects.get(pk=pk)
    assert recreated.text == NEW
    assert_created_inactive_with_its_activation_drafted(recreated, response)
    assert sent_system_prompt(caller, configuration, fake_provider) == PROMPT
    assert NEW not in fake_provider.wire_text()


def test_a_publisher_publishing_the_activation_puts_the_new_row_in_use(
    client, writer, live, fake_provider, admin_client
):
    _, configuration, caller = live
    client.post(f"{SNIPPETS}/add/", {**new_snippet_form("refunds"), "tag_names": "tone"})
    created = Snippet.objects.get(identifier="refunds")

    assert admin_client.post(f"{SNIPPETS}/{created.pk}/publish/").status_code == 302

    assert Snippet.objects.get(pk=created.pk).is_active is True
    assert Draft.objects.count() == 0
    assert sent_system_prompt(caller, configuration, fake_provider) == (
        f"{PROMPT}\n\nRefunds:\n{NEW}\n\nTone of voice:\n{OLD}"
    )
