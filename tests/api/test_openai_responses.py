"""``/api/openai/v1/responses`` with the official ``openai`` SDK against a live server whose
configuration is served by the loopback fake provider (which answers chat completions: the endpoint
translates). The fake's recorder proves what reached the wire; refused context never reaches it.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

import json

import openai
import pytest

from agents.models import ApiClient, ClientDailyUsage, CompletionRecord, StoredResponse
from agents.services import api_client_create
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261203)}
GITHUB = CANARIES["github_classic_pat"]
SYSTEM_PROMPT = "You write release notes for the Atlas team."
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def leaked(text: str, *canaries) -> list[str]:
    return [c.kind for c in canaries for fragment in c.fragments() if fragment in text]


@pytest.fixture
def served(fake_provider):
    """A configuration in ``external_eu`` served by the fake, and a client token that may use it."""
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        system_prompt=SYSTEM_PROMPT,
        system_prompt_data_class=DataClass.EDITOR_CONTENT,
        identifier="release-notes",
    )
    issued = api_client_create(
        name="consumer-app",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return configuration, issued.token


def sdk(live_server, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20)


def test_create_is_governed_redacted_and_stored_with_the_reply_label(live_server, fake_provider, served):
    configuration, token = served
    fake_provider.script(Reply(text="Atlas 2.1 ships faster search."))

    response = sdk(live_server, token).responses.create(
        model=configuration.identifier,
        instructions="Answer in one sentence.",
        input=f"Summarise the release. Deploy key: {GITHUB.value}",
        max_output_tokens=200,
        temperature=0.2,
    )

    assert response.output_text == "Atlas 2.1 ships faster search."
    assert (response.status, response.model, response.object) == ("completed", "release-notes", "response")
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    extra = response.model_extra
    assert extra["governance"]["redactions"] == {"sent": {"github_token": 1}, "reply": {}}
    assert extra["governance_receipt"]["label"] == "editor_content"
    sources = {(s["kind"], s["identifier"]): s["outcome"] for s in extra["governance"]["decision"]["sources"]}
    assert sources == {
        ("system_prompt", "release-notes"): "allowed",
        ("caller_context", "instructions"): "allowed",
        ("task_input", "input"): "allowed",
    }
    (body,) = fake_provider.bodies()
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == SYSTEM_PROMPT
    assert body["messages"][1]["content"] == (
        'Context item "system":\nAnswer in one sentence.\n\n'
        "Summarise the release. Deploy key: [REDACTED:github_token]"
    )
    assert (body["max_tokens"], body["temperature"]) == (200, 0.2)
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    stored = StoredResponse.objects.get()
    assert (stored.response_id, stored.label, stored.receiver_label) == (response.id, "editor_content", "editor_content")
    assert leaked(json.dumps(stored.conversation), GITHUB) == []
    assert CompletionRecord.objects.get().request_id == extra["governance"]["request_id"]
