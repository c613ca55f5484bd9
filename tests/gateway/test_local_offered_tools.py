"""The offline ``local`` provider calls only the tools a request offers: the demo script's server-side
``snippets_by_tag`` is not called through ``/api/openai/v1`` (which never offers server-side tools), nor
by a run whose configuration does not offer it; a client's own tool is called when the script names it."""

from __future__ import annotations

import json

import pytest

from agents.models import AgentStep, RunMessage, ToolCallRecord
from catalog.models import ProviderKind
from editors.demo import LOCAL_ANSWER, LOCAL_SCRIPT
from governance.vocabulary import TrustZone
from tests.agents.runs import run_to_end
from tests.factories import configuration_make, model_make, provider_make, snippet_make

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def local_configuration(script=LOCAL_SCRIPT, **fields):
    provider = provider_make(kind=ProviderKind.LOCAL, trust_zone=TrustZone.LOCAL, options={"script": script})
    fields.setdefault("allowed_tool_groups", ["content"])
    return configuration_make(model=model_make(provider=provider, model_id="local-echo"), **fields)


@pytest.fixture
def demo(make_caller):
    configuration = local_configuration()
    return configuration, make_caller("configurations:use", configurations=(configuration,))


def chat(caller, configuration, **fields):
    body = {"model": configuration.identifier, "messages": [{"role": "user", "content": "Draft a note."}]}
    return caller.post(CHAT, {**body, **fields})


def stream_chunks(response) -> list[dict]:
    raw = b"".join(response.streaming_content).decode()
    assert raw.endswith("data: [DONE]\n\n")
    return [json.loads(block[len("data: ") :]) for block in raw.split("\n\n")[:-2]]


@pytest.mark.parametrize("tools", [None, [WEATHER]], ids=["no tools", "client tools only"])
def test_a_chat_completion_never_calls_a_tool_it_did_not_offer(demo, tools):
    configuration, caller = demo
    offered = {"tools": tools} if tools else {}

    response = chat(caller, configuration, **offered)

    assert response.status_code == 200, response.content
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert "tool_calls" not in choice["message"] or not choice["message"]["tool_calls"]
    assert choice["message"]["content"] == LOCAL_ANSWER


@pytest.mark.parametrize("tools", [None, [WEATHER]], ids=["no tools", "client tools only"])
def test_a_streamed_chat_completion_never_calls_a_tool_it_did_not_offer(demo, tools):
    configuration, caller = demo
    offered = {"tools": tools} if tools else {}

    chunks = stream_chunks(chat(caller, configuration, stream=True, **offered))

    deltas = [chunk["choices"][0]["delta"] for chunk in chunks if chunk["choices"]]
    assert not [delta for delta in deltas if delta.get("tool_calls")]
    assert "".join(delta.get("content") or "" for delta in deltas) == LOCAL_ANSWER
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"


def test_a_client_tool_the_script_names_is_called_when_offered(make_caller):
    script = [
        {"tool_calls": [{"name": "snippets_by_tag"}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]}
    ]
    configuration = local_configuration(script=script)
    caller = make_caller("configurations:use", configurations=(configuration,))

    response = chat(caller, configuration, tools=[WEATHER])

    assert response.status_code == 200, response.content
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_0_0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        }
    ]


def test_a_run_whose_configuration_offers_no_tools_is_answered_without_a_tool_call(
    django_capture_on_commit_callbacks,
):
    configuration = local_configuration(allowed_tool_groups=[])

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert AgentStep.objects.filter(run=run).count() == 1
    assert not ToolCallRecord.objects.filter(run=run).exists()
    [(role, content)] = RunMessage.objects.filter(run=run).values_list("role", "content")
    assert role == "assistant"
    assert content.startswith("Local model (offline): received ") and "0 tools offered)" in content


def test_a_run_whose_configuration_offers_the_tool_calls_it(django_capture_on_commit_callbacks):
    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    configuration = local_configuration()

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert list(ToolCallRecord.objects.filter(run=run).values_list("tool_name", "status")) == [
        ("snippets_by_tag", "completed")
    ]
    assert RunMessage.objects.filter(run=run).last().content == LOCAL_ANSWER
