"""The Anthropic adapter, driving the real ``anthropic`` SDK against the loopback fake provider."""

from __future__ import annotations

import json
import logging
import random
import time

import pytest

from context_assembly.messages import ImagePart, Message, TextPart, ToolCall, ToolSpec
from governance.vocabulary import Provenance
from providers.anthropic import AnthropicAdapter
from providers.base import KEYLESS_PLACEHOLDER
from providers.failures import FailureClass, ProviderError
from providers.values import ProviderCall, ProviderConfig, Usage
from tests.fakes.provider_server import (
    FakeProvider,
    RawReply,
    Reply,
    context_length_exceeded,
    count_prompt_tokens,
    count_text_tokens,
    rate_limited,
    server_error,
    unauthorized,
)

API_KEY = "-".join(["test", "key", str(random.Random(47).randint(10_000, 99_999)), "anthropic"])
SYSTEM = Message(role="system", content="You are terse.")
USER = Message(role="user", content="What is the capital of France?")
WEATHER_SPEC = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WEATHER = ("toolu_1", "get_weather", {"city": "Paris", "unit": "celsius"})
TIME = ("toolu_2", "get_time", {"zone": "Europe/Paris"})


def config(fake: FakeProvider | None, **overrides) -> ProviderConfig:
    values = {
        "identifier": "anthropic-test",
        "kind": "anthropic",
        "base_url": fake.anthropic_base_url if fake else "http://127.0.0.1:9",
        "api_key": API_KEY,
        "timeout_seconds": 1.0,
        "max_retries": 0,
        **overrides,
    }
    return ProviderConfig(**values)


def call(stream: bool = False, **overrides) -> ProviderCall:
    values = {"model_id": "claude-x", "messages": (SYSTEM, USER), "max_tokens": 64, "stream": stream}
    return ProviderCall(**{**values, **overrides})


def complete(fake: FakeProvider | None, provider_call: ProviderCall, **config_overrides):
    adapter = AnthropicAdapter(config(fake, **config_overrides))
    try:
        return adapter.complete(provider_call)
    finally:
        adapter.close()


def failure(fake: FakeProvider | None, provider_call: ProviderCall, **config_overrides) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        complete(fake, provider_call, **config_overrides)
    return raised.value


def sse(*events: tuple[str, dict]) -> RawReply:
    body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return RawReply(body.encode(), content_type="text/event-stream")


# --- replies --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_text_reply_with_exact_usage_as_the_fake_reported_it(fake_provider, stream):
    fake_provider.script("Paris is the capital of France.")
    reply = complete(fake_provider, call(stream))
    (body,) = fake_provider.bodies()
    assert reply.text == "Paris is the capital of France."
    assert (reply.tool_calls, reply.finish_reason) == ((), "stop")
    assert (reply.model_id, reply.response_id) == ("claude-x", "msg_fake1")
    assert reply.usage == Usage(
        prompt_tokens=count_prompt_tokens(body),
        cached_tokens=0,
        completion_tokens=count_text_tokens("Paris is the capital of France."),
        provenance=Provenance.PROVIDER_REPORTED,
        cache_write_tokens=0,
    )
    assert count_prompt_tokens(body) > 0


@pytest.mark.parametrize("stream", [False, True])
def test_tool_use_blocks_become_tool_calls_with_exact_arguments(fake_provider, stream):
    fake_provider.script(Reply.tools(WEATHER, TIME, text="Checking."))
    reply = complete(fake_provider, call(stream, tool_specs=(WEATHER_SPEC,)))
    assert reply.tool_calls == (
        ToolCall(id="toolu_1", name="get_weather", arguments='{"city":"Paris","unit":"celsius"}'),
        ToolCall(id="toolu_2", name="get_time", arguments='{"zone":"Europe/Paris"}'),
    )
    assert (reply.text, reply.finish_reason) == ("Checking.", "tool_calls")


@pytest.mark.parametrize("stream", [False, True])
def test_cached_tokens_are_added_back_into_the_prompt_total(fake_provider, stream):
    # The fake sends input_tokens=1024 (uncached) and cache_read_input_tokens=1024, as the real API does.
    fake_provider.script(Reply(text="ok", prompt_tokens=2048, completion_tokens=5, cached_tokens=1024))
    usage = complete(fake_provider, call(stream)).usage
    assert usage == Usage(2048, 1024, 5, Provenance.PROVIDER_REPORTED, cache_write_tokens=0)


def test_cache_creation_tokens_count_as_prompt_tokens_and_as_cache_writes(fake_provider):
    usage = {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 200}
    usage["cache_creation_input_tokens"] = 300
    fake_provider.script(
        {
            "id": "msg_x",
            "type": "message",
            "role": "assistant",
            "model": "claude-served",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
    )
    reply = complete(fake_provider, call())
    assert reply.usage == Usage(510, 200, 3, Provenance.PROVIDER_REPORTED, cache_write_tokens=300)
    assert reply.model_id == "claude-served"


@pytest.mark.parametrize("stream", [False, True])
def test_missing_usage_is_unavailable_not_zero(fake_provider, stream):
    # The SDK's own stream helper raises AttributeError on such a stream; raw events do not.
    fake_provider.script(Reply(text="ok", include_usage=False))
    reply = complete(fake_provider, call(stream))
    assert reply.text == "ok"
    assert reply.usage == Usage.unavailable()


@pytest.mark.parametrize("stream", [False, True])
def test_max_tokens_stop_reason_finishes_with_length(fake_provider, stream):
    fake_provider.script(Reply(text="cut", max_tokens_reached=True))
    assert complete(fake_provider, call(stream)).finish_reason == "length"


@pytest.mark.parametrize(
    "stop_reason, finish",
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("refusal", "content_filter"), ("pause_turn", "other")],
)
def test_stop_reasons_map_to_finish_reasons(fake_provider, stop_reason, finish):
    fake_provider.script(
        {
            "id": "msg_x",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    assert complete(fake_provider, call()).finish_reason == finish


# --- the wire -------------------------------------------------------------------------------------------


def test_system_messages_go_to_the_system_parameter_joined_by_blank_lines(fake_provider):
    second = Message(role="system", content=(TextPart("Snippet A."), TextPart(" Snippet B.")))
    complete(fake_provider, call(messages=(SYSTEM, second, USER), temperature=0.0, max_tokens=77))
    assert fake_provider.bodies() == [
        {
            "model": "claude-x",
            "max_tokens": 77,
            "system": "You are terse.\n\nSnippet A. Snippet B.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}
            ],
            "temperature": 0.0,
        }
    ]
    assert fake_provider.requests[0].path == "/v1/messages"


def test_tool_turns_become_tool_use_and_tool_result_blocks_with_roles_alternating(fake_provider):
    calls = (ToolCall("toolu_1", "get_weather", '{"city":"Paris"}'), ToolCall("toolu_2", "get_time", ""))
    messages = (
        SYSTEM,
        USER,
        Message(role="user", content="Use the tools."),
        Message(role="assistant", content="Checking.", tool_calls=calls),
        Message(role="tool", content="12 degrees", tool_call_id="toolu_1"),
        Message(role="tool", content="10:00", tool_call_id="toolu_2"),
        Message(role="user", content="And tomorrow?"),
    )
    complete(fake_provider, call(messages=messages, tool_specs=(WEATHER_SPEC,)))
    (body,) = fake_provider.bodies()
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is the capital of France?"},
                {"type": "text", "text": "Use the tools."},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "12 degrees"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "10:00"}],
                },
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]


def test_tool_without_parameters_gets_an_empty_object_schema(fake_provider):
    complete(fake_provider, call(tool_specs=(ToolSpec(name="ping"),)))
    assert fake_provider.bodies()[0]["tools"] == [
        {"name": "ping", "input_schema": {"type": "object", "properties": {}}}
    ]


def test_images_become_base64_or_url_image_blocks(fake_provider):
    content = (
        TextPart("Compare."),
        ImagePart(url="data:image/png;base64,iVBORw0KGgo=", detail="low"),
        ImagePart(url="https://example.org/cat.jpg"),
    )
    complete(fake_provider, call(messages=(Message(role="user", content=content),)))
    # An image of unknown size is estimated at its documented maximum (1,445 tokens), so the prefix
    # reaches the default 1,024-token minimum and the newest turn's last block is a cache breakpoint.
    assert fake_provider.bodies()[0]["messages"][0]["content"] == [
        {"type": "text", "text": "Compare."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {
            "type": "image",
            "source": {"type": "url", "url": "https://example.org/cat.jpg"},
            "cache_control": {"type": "ephemeral"},
        },
    ]


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]"])
def test_tool_call_arguments_that_are_not_a_json_object_are_refused_before_sending(fake_provider, arguments):
    assistant = Message(role="assistant", content="", tool_calls=(ToolCall("toolu_1", "f", arguments),))
    tool = Message(role="tool", content="done", tool_call_id="toolu_1")
    error = failure(fake_provider, call(messages=(USER, assistant, tool)))
    assert (error.failure_class, error.retryable) == (FailureClass.CLIENT_ERROR, False)
    assert "messages[1]" in error.message and "toolu_1" in error.message
    assert arguments not in error.message
    assert fake_provider.requests == []


def test_stream_request_sets_stream_and_the_api_key_is_sent():
    with FakeProvider(api_key=API_KEY) as fake:
        assert complete(fake, call(stream=True)).text == "ok"
        (request,) = fake.requests
    assert request.body["stream"] is True
    assert "temperature" not in request.body and "stream_options" not in request.body
    assert request.headers["authorization"] == f"Bearer {API_KEY}"


def test_keyless_provider_gets_a_placeholder_never_the_environment_key(fake_provider, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    complete(fake_provider, call(), api_key=None)
    headers = fake_provider.requests[0].headers
    assert API_KEY not in repr(headers)
    assert KEYLESS_PLACEHOLDER in (headers.get("authorization", "") + headers.get("x-api-key", ""))


# --- failures -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "reply, failure_class, retryable, status, retry_after",
    [
        (rate_limited(retry_after=3), FailureClass.RATE_LIMIT, True, 429, 3.0),
        (server_error(), FailureClass.SERVER_ERROR, True, 500, None),
        (Reply.failing(529, "Overloaded"), FailureClass.SERVER_ERROR, True, 529, None),
        (unauthorized(), FailureClass.AUTH, False, 401, None),
        (context_length_exceeded(), FailureClass.CONTEXT_OVERFLOW, False, 400, None),
        (Reply.failing(400, "messages: roles must alternate"), FailureClass.CLIENT_ERROR, False, 400, None),
        (Reply.failing(404, "model: claude-x"), FailureClass.CONFIGURATION, False, 404, None),
        (Reply(text="ok", malformed=True), FailureClass.MALFORMED, False, None, None),
    ],
)
def test_each_failure_is_classified_exactly(
    fake_provider, stream, reply, failure_class, retryable, status, retry_after
):
    fake_provider.script(reply)
    error = failure(fake_provider, call(stream))
    assert (error.failure_class, error.retryable, error.status, error.retry_after) == (
        failure_class,
        retryable,
        status,
        retry_after,
    )
    assert (error.provider, error.code, error.http_status) == ("anthropic-test", "provider_error", 502)
    assert len(fake_provider.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_latency_beyond_the_timeout_is_a_retryable_timeout(fake_provider, stream):
    # The reply would come after 30 s (the fake gives up waiting when it stops): the call ends at its
    # 0.3 s timeout, with room for a loaded machine, never at the reply.
    fake_provider.script(Reply(text="late", latency=30.0))
    started = time.monotonic()
    error = failure(fake_provider, call(stream), timeout_seconds=0.3)
    assert time.monotonic() - started < 10
    assert (error.failure_class, error.retryable) == (FailureClass.TIMEOUT, True)


def test_truncated_stream_is_a_retryable_connection_failure(fake_provider):
    fake_provider.script(Reply(text="abcdefgh" * 7, truncate_stream=True))
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)
    assert error.extra["cause"] == "RemoteProtocolError"


def test_overloaded_error_event_inside_a_stream_is_a_retryable_server_error(fake_provider):
    start = {"id": "msg_x", "type": "message", "role": "assistant", "model": "claude-x", "content": []}
    start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 0}}
    fake_provider.script(
        sse(
            ("message_start", {"type": "message_start", "message": start}),
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        )
    )
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.SERVER_ERROR, True)
    assert error.extra["provider_code"] == "overloaded_error"
    assert (error.status, error.message) == (
        None,
        "provider 'anthropic-test' call failed: provider server error",
    )


def test_stream_that_ends_before_message_stop_is_a_connection_failure(fake_provider):
    start = {"id": "msg_x", "type": "message", "role": "assistant", "model": "claude-x", "content": []}
    start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 0}}
    fake_provider.script(sse(("message_start", {"type": "message_start", "message": start})))
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)


def test_stream_from_a_compatible_server_without_id_model_or_usage_is_read_whole(fake_provider):
    # What an Anthropic-compatible server may leave out: the message's id, model and usage, and the
    # usage and stop sequence of message_delta. The SDK reads such a stream without a word.
    block = {"type": "text", "text": ""}
    fake_provider.script(
        sse(
            ("message_start", {"type": "message_start", "message": {"type": "message", "content": []}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Paris"}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            ("message_stop", {"type": "message_stop"}),
        )
    )
    reply = complete(fake_provider, call(stream=True))
    assert (reply.text, reply.finish_reason, reply.tool_calls) == ("Paris", "stop", ())
    assert (reply.model_id, reply.response_id) == ("claude-x", "")
    assert reply.usage == Usage.unavailable()


def test_nothing_listening_is_a_retryable_connection_failure():
    with FakeProvider() as fake:
        base_url = fake.anthropic_base_url
    error = failure(None, call(), base_url=base_url)
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)


def test_api_key_never_appears_in_errors_or_logs(caplog):
    caplog.set_level(logging.DEBUG)
    wrong_key = API_KEY[::-1]
    with FakeProvider(api_key=API_KEY) as fake:
        error = failure(fake, call(stream=True), api_key=wrong_key)
    assert error.failure_class == FailureClass.AUTH
    assert error.__cause__ is None
    rendered = " ".join([str(error), repr(error), repr(error.as_dict()), caplog.text])
    assert wrong_key not in rendered
    assert "What is the capital" not in str(error.as_dict())
    assert "failure_class=auth status=401" in caplog.text
    assert wrong_key not in repr(config(None, api_key=wrong_key))
