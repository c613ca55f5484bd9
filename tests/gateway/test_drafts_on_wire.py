"""Drafts never reach a provider: after a draft save a completion and a run step still send the live
text, the API reads live (with ``has_draft``); after publishing, the new text goes on the wire."""

from __future__ import annotations

import pytest

from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
OLD, NEW = "Write warmly and briefly.", "Write warmly, briefly and concretely."
OLD_PROMPT, NEW_PROMPT = "You write our newsletter.", "You write our quarterly newsletter."


def snippet_form(snippet, text: str) -> dict[str, str]:
    return {
        "identifier": snippet.identifier, "name": snippet.name, "description": "", "text": text,
        "tag_names": "tone", "is_active": "on", "sorting": "0", "data_class": snippet.data_class,
        "ceiling": snippet.ceiling, "enforcement": snippet.enforcement, "metadata": "{}",
    }  # fmt: skip


def configuration_form(configuration, system_prompt: str) -> dict[str, str]:
    return {
        "identifier": configuration.identifier, "name": configuration.name, "model": str(configuration.model_id),
        "is_active": "on", "snippet_tags": '["tone"]', "system_prompt": system_prompt,
        "system_prompt_data_class": configuration.system_prompt_data_class,
        "system_prompt_ceiling": configuration.system_prompt_ceiling,
        "system_prompt_enforcement": configuration.system_prompt_enforcement,
        "max_iterations": "5", "context_usage_note": "off", "skill_list": "", "skill_mode": "full",
        "context_strategy": "drop_oldest", "compaction_threshold": "0.8", "compaction_keep": "2",
        "skill_trust_floor": "untrusted", "allowed_tool_groups": "[]", "allowed_tools": "[]",
        "fallback_links-TOTAL_FORMS": "0", "fallback_links-INITIAL_FORMS": "0",
        "fallback_links-MIN_NUM_FORMS": "0", "fallback_links-MAX_NUM_FORMS": "1000",
    }  # fmt: skip


def system_text(body: dict) -> str:
    return body["messages"][0]["content"]


def test_drafts_stay_off_the_wire_until_published(
    admin_client, make_caller, fake_provider, django_capture_on_commit_callbacks
):
    snippet = snippet_make(identifier="tone-of-voice", name="Tone of voice", text=OLD, tags=("tone",))
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, system_prompt=OLD_PROMPT, snippet_tags=["tone"]
    )
    caller = make_caller("configurations:use", "snippets:read", configurations=(configuration,))
    snippet_url = f"/admin/snippets/snippet/{snippet.pk}"
    configuration_url = f"/admin/catalog/configuration/{configuration.pk}"
    assert admin_client.post(f"{snippet_url}/change/", snippet_form(snippet, NEW)).status_code == 302
    saved = admin_client.post(f"{configuration_url}/change/", configuration_form(configuration, NEW_PROMPT))
    assert saved.status_code == 302

    read = caller.get("/api/v1/snippets/tone-of-voice").json()
    assert (read["text"], read["has_draft"]) == (OLD, True)
    fake_provider.script(Reply(text="Fine."), Reply(text="Done."))
    chat = {"model": configuration.identifier, "messages": [{"role": "user", "content": "Hello"}]}
    assert caller.post(CHAT, chat).status_code == 200
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    live_system = f"{OLD_PROMPT}\n\nTone of voice:\n{OLD}"
    assert [system_text(body) for body in fake_provider.bodies()] == [live_system, live_system]
    assert NEW not in fake_provider.wire_text()

    assert admin_client.post(f"{snippet_url}/publish/").status_code == 302
    assert admin_client.post(f"{configuration_url}/publish/").status_code == 302

    read = caller.get("/api/v1/snippets/tone-of-voice").json()
    assert (read["text"], read["has_draft"]) == (NEW, False)
    fake_provider.script(Reply(text="Fine."))
    assert caller.post(CHAT, chat).status_code == 200
    assert system_text(fake_provider.bodies()[-1]) == f"{NEW_PROMPT}\n\nTone of voice:\n{NEW}"


def test_a_configuration_publish_is_a_history_version_naming_the_publisher(
    admin_client, admin_user, fake_provider
):
    from catalog.models import Configuration

    configuration = fake_configuration(fake_provider, system_prompt=OLD_PROMPT, snippet_tags=["tone"])
    url = f"/admin/catalog/configuration/{configuration.pk}"
    versions = Configuration.history.filter(id=configuration.pk).count()

    assert (
        admin_client.post(f"{url}/change/", configuration_form(configuration, NEW_PROMPT)).status_code == 302
    )
    assert Configuration.history.filter(id=configuration.pk).count() == versions
    assert admin_client.post(f"{url}/publish/").status_code == 302

    latest = Configuration.history.filter(id=configuration.pk).latest("history_id")
    assert (latest.system_prompt, latest.history_user, latest.history_change_reason) == (
        NEW_PROMPT,
        admin_user,
        "published",
    )
    from governance.models import Publication

    publication = Publication.objects.get()
    assert (publication.version, publication.object_id) == (latest.history_id, str(configuration.pk))
