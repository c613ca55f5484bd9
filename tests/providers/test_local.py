"""The local provider: deterministic, offline, scripted by assistant-message count, counted by our estimator."""

from __future__ import annotations

import socket

import pytest

from context_assembly.estimator import Estimator
from context_assembly.messages import Message, ToolCall, ToolSpec
from context_assembly.profiles import ModelProfile
from governance.vocabulary import Provenance
from providers.adapters import adapter_for
from providers.dispatch import complete_with_fallbacks
from providers.failures import FailureClass, ProviderError
from providers.local import DEFAULT_CONTEXT_WINDOW, LocalAdapter
from providers.values import ProviderCall, ProviderConfig, Usage

SYSTEM = Message(role="system", content="You are the demo assistant.")
USER = Message(role="user", content="Summarise   the\nrelease notes.")
SPEC = ToolSpec(
    name="read_notes",
    description="Read the release notes.",
    parameters={"type": "object", "properties": {"version": {"type": "string", "description": "Version."}}},
)
SCRIPT = [
    {"text": "Let me look.", "tool_calls": [{"name": "read_notes", "arguments": {"version": "1.2"}}]},
    {"text": "Version 1.2 fixes two bugs."},
]


def estimator() -> Estimator:
    return Estimator(ModelProfile("independent", 1000, None, "o200k_base"))


def local(**options) -> LocalAdapter:
    return LocalAdapter(ProviderConfig(identifier="local", kind="local", base_url="", options=options))


def call(*messages: Message, tool_specs: tuple[ToolSpec, ...] = ()) -> ProviderCall:
    return ProviderCall(
        model_id="local-demo", messages=messages or (SYSTEM, USER), tool_specs=tool_specs, max_tokens=256
    )


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the local provider opened a socket")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_unscripted_reply_describes_the_request_with_our_estimate(no_network):
    provider_call = call(tool_specs=(SPEC,))
    prompt = estimator().count_request(provider_call.messages, provider_call.tool_specs)
    reply = local().complete(provider_call)
    assert reply.text == (
        f"Local model (offline): received 2 messages ({prompt} prompt tokens, 1 tool offered). "
        "Last user message: «Summarise the release notes.»"
    )
    assert (reply.tool_calls, reply.finish_reason, reply.model_id) == ((), "stop", "local-demo")
    assert reply.usage == Usage(prompt, 0, estimator().count_text(reply.text), Provenance.PROVIDER_REPORTED)


def test_same_call_gives_the_same_reply_and_id_and_another_call_another_id(no_network):
    first, second = local().complete(call()), local().complete(call())
    other = local().complete(call(SYSTEM, Message(role="user", content="Something else.")))
    assert first == second
    assert first.response_id.startswith("local-") and len(first.response_id) == len("local-") + 24
    assert other.response_id != first.response_id


def test_long_user_message_is_previewed_to_200_characters():
    reply = local().complete(call(Message(role="user", content="x" * 250)))
    assert reply.text.endswith("Last user message: «" + "x" * 200 + "…»")


def test_call_without_a_user_message_says_so():
    reply = local().complete(call(SYSTEM))
    assert reply.text.endswith("0 tools offered). There is no user message.")


def test_script_is_consumed_by_the_number_of_assistant_messages(no_network):
    adapter = local(script=SCRIPT)
    first = adapter.complete(call(SYSTEM, USER, tool_specs=(SPEC,)))
    assert first.text == "Let me look."
    assert first.tool_calls == (ToolCall(id="call_0_0", name="read_notes", arguments='{"version":"1.2"}'),)
    assert first.finish_reason == "tool_calls"
    transcript = (
        SYSTEM,
        USER,
        Message(role="assistant", content="Let me look.", tool_calls=first.tool_calls),
        Message(role="tool", content="Fixed: two bugs.", tool_call_id="call_0_0"),
    )
    second = adapter.complete(call(*transcript))
    assert (second.text, second.tool_calls, second.finish_reason) == (
        "Version 1.2 fixes two bugs.",
        (),
        "stop",
    )
    # Resuming the same step gives the same answer; past the end the reply describes the request.
    assert adapter.complete(call(*transcript)) == second
    beyond = adapter.complete(call(*transcript, Message(role="assistant", content="Done."), USER))
    assert beyond.text.startswith("Local model (offline): received 6 messages")


def test_scripted_usage_counts_text_and_arguments_with_the_estimator():
    provider_call = call(SYSTEM, USER, tool_specs=(SPEC,))
    reply = local(script=SCRIPT).complete(provider_call)
    counter = estimator()
    assert reply.usage == Usage(
        prompt_tokens=counter.count_request(provider_call.messages, (SPEC,)),
        cached_tokens=0,
        completion_tokens=counter.count_text("Let me look.") + counter.count_text('{"version":"1.2"}'),
        provenance=Provenance.PROVIDER_REPORTED,
    )
    assert reply.usage.prompt_tokens == counter.count_messages(provider_call.messages) + counter.count_tools(
        (SPEC,)
    )


def test_script_arguments_given_as_json_text_are_kept_verbatim():
    script = [{"tool_calls": [{"name": "a", "arguments": '{"b": 1}'}, {"name": "c"}]}]
    reply = local(script=script).complete(call(tool_specs=(ToolSpec(name="a"), ToolSpec(name="c"))))
    assert reply.tool_calls == (ToolCall("call_0_0", "a", '{"b": 1}'), ToolCall("call_0_1", "c", "{}"))
    assert reply.text == ""


def test_a_scripted_call_to_a_tool_the_call_does_not_offer_is_not_made(no_network):
    script = [{"tool_calls": [{"name": "a"}, {"name": "read_notes", "arguments": {"version": "2"}}]}]
    offered = local(script=script).complete(call(tool_specs=(SPEC,)))
    assert offered.tool_calls == (ToolCall("call_0_0", "read_notes", '{"version":"2"}'),)
    assert offered.finish_reason == "tool_calls"
    # Left with neither text nor calls, the step answers as past the end of the script.
    provider_call = call(tool_specs=(ToolSpec(name="other"),))
    none_offered = local(script=script).complete(provider_call)
    assert none_offered == local().complete(provider_call)
    assert (none_offered.tool_calls, none_offered.finish_reason) == ((), "stop")
    # A spec's text stays when its calls are dropped.
    texted = local(script=[{**SCRIPT[0]}]).complete(call())
    assert (texted.text, texted.tool_calls, texted.finish_reason) == ("Let me look.", (), "stop")


def test_prompt_over_the_context_window_is_a_context_overflow():
    with pytest.raises(ProviderError) as raised:
        local(context_window=10).complete(call())
    error = raised.value
    assert (error.failure_class, error.retryable, error.status) == (FailureClass.CONTEXT_OVERFLOW, False, 400)
    assert error.extra["context_window"] == 10
    assert error.extra["prompt_tokens"] == estimator().count_request((SYSTEM, USER))
    assert local().context_window == DEFAULT_CONTEXT_WINDOW


def test_latency_option_waits_before_answering():
    waits: list[float] = []
    config = ProviderConfig(identifier="local", kind="local", base_url="", options={"latency": 0.25})
    LocalAdapter(config, sleep=waits.append).complete(call())
    assert waits == [0.25]


@pytest.mark.parametrize(
    "options, problem",
    [
        ({"scirpt": []}, "unknown local option 'scirpt'"),
        ({"script": {"text": "x"}}, "script must be a list"),
        ({"script": [{"txt": "x"}]}, "script[0] must have only"),
        ({"script": [{"text": 3}]}, "script[0].text must be a string"),
        ({"script": [{"tool_calls": [{"arguments": {}}]}]}, "script[0].tool_calls[0] needs a name"),
        ({"context_window": 0}, "context_window must be a positive integer"),
        ({"latency": -1}, "latency must be a non-negative number"),
    ],
)
def test_invalid_options_are_a_configuration_failure(options, problem):
    with pytest.raises(ProviderError) as raised:
        adapter_for(ProviderConfig(identifier="local", kind="local", base_url="", options=options))
    assert raised.value.failure_class == FailureClass.CONFIGURATION
    assert problem in raised.value.message


def test_dispatch_through_the_local_provider_opens_no_socket(no_network):
    config = ProviderConfig(identifier="local", kind="local", base_url="", options={"script": SCRIPT})
    result = complete_with_fallbacks([(config, "local-demo")], call(), sleep=pytest.fail)
    assert (result.served_index, result.answer.text) == (0, "Let me look.")
    with pytest.raises(AssertionError, match="opened a socket"):
        socket.create_connection(("127.0.0.1", 9))


def test_a_spec_with_when_applies_only_to_a_call_whose_user_messages_contain_it(no_network):
    script = [
        {"when": "RELEASE NOTES", "tool_calls": [{"name": "read_notes", "arguments": {"version": "1.2"}}]},
        {"text": "Version 1.2 fixes two bugs."},
    ]
    adapter = local(script=script)
    tail = Message(role="user", content="(context usage: 40 of 1,000 tokens)")

    asked = adapter.complete(call(SYSTEM, USER, tail, tool_specs=(SPEC,)))
    other = adapter.complete(call(SYSTEM, Message(role="user", content="Say hello."), tool_specs=(SPEC,)))

    assert [(c.name, c.arguments) for c in asked.tool_calls] == [("read_notes", '{"version":"1.2"}')]
    assert (other.text, other.tool_calls, other.finish_reason) == ("Version 1.2 fixes two bugs.", (), "stop")


@pytest.mark.parametrize("spec", [{"when": 3, "text": "x"}, {"when": "notes"}])
def test_a_spec_with_an_unreadable_when_is_a_configuration_error(spec):
    with pytest.raises(ProviderError) as raised:
        local(script=[spec])
    assert raised.value.failure_class == FailureClass.CONFIGURATION
