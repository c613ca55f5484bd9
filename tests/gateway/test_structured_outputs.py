"""What apps send beside their messages, each forwarded, held or refused, never silently dropped:
``response_format`` (json_schema strict, json_object) and ``tool_choice`` reach an OpenAI-compatible
provider and are held by the offline local provider, which cannot be sent them; ``parallel_tool_calls``
is forwarded; a ``service_tier`` other than the default is refused; ``/models`` lists each
configuration with its modalities and window. Proved with the ``openai`` SDK's typed parse and with
pydantic-ai returning a typed object, against a live server.
"""

from __future__ import annotations

import json

import openai
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from catalog.models import ProviderKind
from catalog.services import api_client_create
from gateway.models import CompletionRecord
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


class Release(BaseModel):
    version: str
    highlights: list[str]
    breaking: bool


def token_for(*configurations) -> str:
    issued = api_client_create(
        name=f"app-{configurations[0].identifier}",
        scopes=["configurations:use"],
        configurations=list(configurations),
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.LOCAL,
    )
    return issued.token


def sdk(live_server, token: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20
    )


def local_configuration(*script: dict, identifier: str = "offline"):
    provider = provider_make(kind=ProviderKind.LOCAL, options={"script": list(script)} if script else {})
    return configuration_make(
        model=model_make(provider=provider, model_id="local-echo"), identifier=identifier
    )


def test_the_sdk_parses_a_strict_json_schema_reply_the_provider_was_asked_for(live_server, fake_provider):
    configuration = fake_configuration(fake_provider, identifier="notes")
    reply = {"version": "2.1", "highlights": ["faster search"], "breaking": False}
    fake_provider.script(Reply(text=json.dumps(reply)))

    parsed = (
        sdk(live_server, token_for(configuration))
        .chat.completions.parse(
            model="notes", messages=[{"role": "user", "content": "Release 2.1"}], response_format=Release
        )
        .choices[0]
        .message.parsed
    )

    assert parsed == Release(version="2.1", highlights=["faster search"], breaking=False)
    sent = fake_provider.bodies()[0]["response_format"]
    assert (sent["type"], sent["json_schema"]["name"], sent["json_schema"]["strict"]) == (
        "json_schema",
        "Release",
        True,
    )
    assert sent["json_schema"]["schema"]["required"] == ["version", "highlights", "breaking"]


def test_pydantic_ai_returns_a_typed_object_from_the_offline_provider(live_server):
    configuration = local_configuration()
    provider = OpenAIProvider(base_url=f"{live_server.url}/api/openai/v1", api_key=token_for(configuration))
    agent = Agent(OpenAIChatModel("offline", provider=provider), output_type=NativeOutput(Release))

    result = agent.run_sync("Summarise release 2.1")

    assert result.output == Release(version="", highlights=[], breaking=False)
    assert CompletionRecord.objects.get().configuration == configuration


def test_the_offline_provider_refuses_a_scripted_reply_that_breaks_the_schema(live_server):
    configuration = local_configuration({"text": '{"version": 2}'})

    with pytest.raises(openai.APIStatusError) as failed:
        sdk(live_server, token_for(configuration)).chat.completions.parse(
            model=configuration.identifier,
            messages=[{"role": "user", "content": "Hi"}],
            response_format=Release,
        )

    assert failed.value.status_code == 502
    assert failed.value.body["failure_class"] == "malformed"


def test_the_offline_provider_holds_tool_choice_and_parallel_tool_calls(live_server):
    calls = [{"name": "get_weather", "arguments": {"city": city}} for city in ("Oslo", "Rome")]
    configuration = local_configuration(*[{"tool_calls": calls}] * 3)
    client = sdk(live_server, token_for(configuration))

    def made(**fields) -> list[str]:
        message = (
            client.chat.completions.create(
                model=configuration.identifier,
                messages=[{"role": "user", "content": "Weather?"}],
                tools=[WEATHER],
                **fields,
            )
            .choices[0]
            .message
        )
        return [json.loads(call.function.arguments)["city"] for call in message.tool_calls or ()]

    assert made() == ["Oslo", "Rome"]
    assert made(parallel_tool_calls=False) == ["Oslo"]
    assert made(tool_choice="none") == []


def test_parallel_tool_calls_and_tool_choice_reach_an_openai_compatible_provider(live_server, fake_provider):
    configuration = fake_configuration(fake_provider, identifier="tools")
    fake_provider.script(Reply(text="ok"))

    sdk(live_server, token_for(configuration)).chat.completions.create(
        model="tools",
        messages=[{"role": "user", "content": "Weather?"}],
        tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        parallel_tool_calls=False,
        seed=11,
        service_tier="auto",
    )

    sent = fake_provider.bodies()[0]
    assert (sent["parallel_tool_calls"], sent["seed"]) == (False, 11)
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert "service_tier" not in sent


def test_a_service_tier_other_than_the_default_is_refused_and_nothing_is_sent(live_server, fake_provider):
    configuration = fake_configuration(fake_provider, identifier="tiered")

    with pytest.raises(openai.BadRequestError) as refused:
        sdk(live_server, token_for(configuration)).chat.completions.create(
            model="tiered", messages=[{"role": "user", "content": "Hi"}], service_tier="flex"
        )

    assert (refused.value.body["code"], refused.value.body["param"]) == (
        "unsupported_parameter",
        "service_tier",
    )
    assert fake_provider.requests == []


def test_models_lists_each_configuration_with_its_modalities_and_window(live_server, fake_provider):
    chat = fake_configuration(fake_provider, identifier="chat")
    embedding = fake_configuration(
        fake_provider,
        identifier="vectors",
        model_embeds=True,
        model_context_window=8_192,
        model_max_output_tokens=1,
    )
    client = sdk(live_server, token_for(chat, embedding))

    listed = {model.id: model.model_extra for model in client.models.list()}
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="vectors", messages=[{"role": "user", "content": "Hi"}])

    assert listed == {
        "chat": {
            "modalities": {"input": ["text"], "output": ["text"]},
            "context_window": 128_000,
            "max_output_tokens": 4_096,
        },
        "vectors": {
            "modalities": {"input": ["text"], "output": ["embedding"]},
            "context_window": 8_192,
            "max_output_tokens": 1,
        },
    }
    assert (refused.value.body["code"], refused.value.body["param"]) == ("modality_unsupported", "model")
    assert fake_provider.requests == []
