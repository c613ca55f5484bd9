"""The OpenAI-compatible adapter, driving the real ``openai`` SDK against the loopback fake provider."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time

import pytest

from context_assembly.messages import Message, ToolCall, ToolSpec
from governance.vocabulary import Provenance
from providers.base import KEYLESS_PLACEHOLDER
from providers.failures import FailureClass, ProviderError
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.streams import StreamFinish, TextDelta, UsageDelta
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

# Built at run time so no secret-shaped literal lives in the repository.
API_KEY = "-".join(["test", "key", str(random.Random(31).randint(10_000, 99_999)), "openai"])
SYSTEM = Message(role="system", content="You are terse.")
USER = Message(role="user", content="What is the capital of France?")
WEATHER_SPEC = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WEATHER = ("call_1", "get_weather", {"city": "Paris", "unit": "celsius"})
TIME = ("call_2", "get_time", {"zone": "Europe/Paris"})


def config(fake: FakeProvider | None, **overrides) -> ProviderConfig:
    values = {
        "identifier": "openai-test",
        "kind": "openai_compatible",
        "base_url": fake.openai_base_url if fake else "http://127.0.0.1:9/v1",
        "api_key": API_KEY,
        "timeout_seconds": 1.0,
        "max_retries": 0,
        **overrides,
    }
    return ProviderConfig(**values)


def call(stream: bool = False, **overrides) -> ProviderCall:
    values = {"model_id": "gpt-4o-mini", "messages": (SYSTEM, USER), "max_tokens": 64, "stream": stream}
    return ProviderCall(**{**values, **overrides})


def complete(fake: FakeProvider | None, provider_call: ProviderCall, **config_overrides):
    adapter = OpenAICompatibleAdapter(config(fake, **config_overrides))
    try:
        return adapter.complete(provider_call)
    finally:
        adapter.close()


def failure(fake: FakeProvider | None, provider_call: ProviderCall, **config_overrides) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        complete(fake, provider_call, **config_overrides)
    return raised.value


# --- replies --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_text_reply_with_exact_usage_as_the_fake_reported_it(fake_provider, stream):
    fake_provider.script("Paris is the capital of France.")
    reply = complete(fake_provider, call(stream))
    (body,) = fake_provider.bodies()
    assert reply.text == "Paris is the capital of France."
    assert (reply.tool_calls, reply.finish_reason) == ((), "stop")
    assert (reply.model_id, reply.response_id) == ("gpt-4o-mini", "chatcmpl-fake1")
    assert reply.usage == Usage(
        prompt_tokens=count_prompt_tokens(body),
        cached_tokens=0,
        completion_tokens=count_text_tokens("Paris is the capital of France."),
        provenance=Provenance.PROVIDER_REPORTED,
    )
    assert count_prompt_tokens(body) == 3 + (3 + 1 + 4) + (3 + 1 + 7)


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_are_parsed_with_their_exact_argument_text(fake_provider, stream):
    fake_provider.script(Reply.tools(WEATHER, TIME, text="Checking."))
    reply = complete(fake_provider, call(stream, tool_specs=(WEATHER_SPEC,)))
    assert reply.tool_calls == (
        ToolCall(id="call_1", name="get_weather", arguments='{"city":"Paris","unit":"celsius"}'),
        ToolCall(id="call_2", name="get_time", arguments='{"zone":"Europe/Paris"}'),
    )
    assert (reply.text, reply.finish_reason) == ("Checking.", "tool_calls")


@pytest.mark.parametrize("stream", [False, True])
def test_cached_tokens_are_reported_inside_the_prompt_total(fake_provider, stream):
    fake_provider.script(Reply(text="ok", prompt_tokens=2048, completion_tokens=5, cached_tokens=1024))
    usage = complete(fake_provider, call(stream)).usage
    assert usage == Usage(2048, 1024, 5, Provenance.PROVIDER_REPORTED)


@pytest.mark.parametrize("stream", [False, True])
def test_missing_usage_is_unavailable_not_zero(fake_provider, stream):
    fake_provider.script(Reply(text="ok", include_usage=False))
    reply = complete(fake_provider, call(stream))
    assert reply.text == "ok"
    assert reply.usage == Usage.unavailable() == Usage(None, None, None, Provenance.UNAVAILABLE)


def test_usage_without_prompt_details_has_unknown_cached_tokens(fake_provider):
    fake_provider.script(
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": "llama3.1:8b",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32},
        }
    )
    reply = complete(fake_provider, call())
    assert reply.usage == Usage(30, None, 2, Provenance.PROVIDER_REPORTED)
    assert reply.model_id == "llama3.1:8b"


@pytest.mark.parametrize("details", [None, "cached", 12], ids=["null", "text", "number"])
@pytest.mark.parametrize("stream", [False, True])
def test_prompt_details_that_are_not_an_object_leave_the_cached_tokens_unknown(
    fake_provider, stream, details
):
    # Read from the JSON as leniently as the SDK's model of it, built without validation, reads it.
    usage = {"prompt_tokens": 30, "completion_tokens": 2, "prompt_tokens_details": details}
    if stream:
        chunks = [
            {"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]},
            {"choices": [], "usage": usage},
        ]
        body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
        fake_provider.script(RawReply(body + b"data: [DONE]\n\n", content_type="text/event-stream"))
    else:
        fake_provider.script(
            {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": usage}
        )
    reply = complete(fake_provider, call(stream))
    assert (reply.text, reply.usage) == ("hi", Usage(30, None, 2, Provenance.PROVIDER_REPORTED))


@pytest.mark.parametrize("stream", [False, True])
def test_max_tokens_reached_finishes_with_length(fake_provider, stream):
    fake_provider.script(Reply(text="cut", max_tokens_reached=True))
    assert complete(fake_provider, call(stream)).finish_reason == "length"


def test_refusal_finishes_with_content_filter(fake_provider):
    message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    fake_provider.script(
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    )
    reply = complete(fake_provider, call())
    assert (reply.text, reply.finish_reason, reply.usage) == ("", "content_filter", Usage.unavailable())


# --- the wire -------------------------------------------------------------------------------------------


def test_json_request_body_is_exactly_the_chat_completions_shape(fake_provider):
    assistant = Message(role="assistant", content="", tool_calls=(ToolCall("call_9", "get_weather", "{}"),))
    tool = Message(role="tool", content="12 degrees", tool_call_id="call_9")
    provider_call = call(
        messages=(SYSTEM, USER, assistant, tool), tool_specs=(WEATHER_SPEC,), temperature=0.2, max_tokens=99
    )
    complete(fake_provider, provider_call)
    assert fake_provider.bodies() == [
        {
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "What is the capital of France?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "content": "12 degrees", "tool_call_id": "call_9"},
            ],
            "max_tokens": 99,
            "tools": [WEATHER_SPEC.to_openai()],
            "temperature": 0.2,
        }
    ]
    assert fake_provider.requests[0].path == "/v1/chat/completions"


def test_stream_request_body_is_the_json_body_with_the_stream_keys(fake_provider):
    assistant = Message(role="assistant", content="", tool_calls=(ToolCall("call_9", "get_weather", "{}"),))
    tool = Message(role="tool", content="12 degrees", tool_call_id="call_9")
    messages = (SYSTEM, USER, assistant, tool)
    for stream in (False, True):
        provider_call = call(stream, messages=messages, tool_specs=(WEATHER_SPEC,), temperature=0.2)
        complete(fake_provider, provider_call)
    whole, streamed = fake_provider.bodies()
    assert streamed == {**whole, "stream": True, "stream_options": {"include_usage": True}}
    assert [request.path for request in fake_provider.requests] == ["/v1/chat/completions"] * 2
    assert [request.headers["content-type"] for request in fake_provider.requests] == ["application/json"] * 2


def test_stream_request_asks_for_usage(fake_provider):
    complete(fake_provider, call(stream=True))
    (body,) = fake_provider.bodies()
    assert (body["stream"], body["stream_options"]) == (True, {"include_usage": True})
    assert body["max_tokens"] == 64
    assert "temperature" not in body and "tools" not in body


def test_api_key_is_sent_as_bearer_token():
    with FakeProvider(api_key=API_KEY) as fake:
        assert complete(fake, call()).text == "ok"
        assert fake.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_keyless_server_gets_a_placeholder_never_the_environment_key(fake_provider, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    complete(fake_provider, call(), api_key=None)
    assert fake_provider.requests[0].headers["authorization"] == f"Bearer {KEYLESS_PLACEHOLDER}"


# --- failures -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "reply, failure_class, retryable, status, retry_after",
    [
        (rate_limited(retry_after=3), FailureClass.RATE_LIMIT, True, 429, 3.0),
        (server_error(), FailureClass.SERVER_ERROR, True, 500, None),
        (unauthorized(), FailureClass.AUTH, False, 401, None),
        (context_length_exceeded(), FailureClass.CONTEXT_OVERFLOW, False, 400, None),
        (Reply.failing(400, "Unsupported parameter."), FailureClass.CLIENT_ERROR, False, 400, None),
        (Reply.failing(404, "The model does not exist."), FailureClass.CONFIGURATION, False, 404, None),
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
    assert (error.provider, error.code, error.http_status) == ("openai-test", "provider_error", 502)
    assert len(fake_provider.requests) == 1  # the SDK's own retries are off


def test_retry_after_in_milliseconds_is_preferred(fake_provider):
    headers = (("retry-after-ms", "1500"), ("retry-after", "9"))
    fake_provider.script(Reply.failing(429, "Slow down.", headers=headers))
    assert failure(fake_provider, call()).retry_after == 1.5


@pytest.mark.parametrize("stream", [False, True])
def test_latency_beyond_the_timeout_is_a_retryable_timeout(fake_provider, stream):
    # The reply would come after 30 s (the fake gives up waiting when it stops): the call ends at its
    # 0.3 s timeout, with room for a loaded machine, never at the reply.
    fake_provider.script(Reply(text="late", latency=30.0))
    started = time.monotonic()
    error = failure(fake_provider, call(stream), timeout_seconds=0.3)
    assert time.monotonic() - started < 10
    assert (error.failure_class, error.retryable, error.status) == (FailureClass.TIMEOUT, True, None)


def test_truncated_stream_is_a_retryable_connection_failure(fake_provider):
    fake_provider.script(Reply(text="abcdefgh" * 7, truncate_stream=True))
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)
    assert error.extra["cause"] == "APIConnectionError"


def test_stream_that_ends_without_a_finish_reason_is_a_connection_failure(fake_provider):
    chunk = b'{"id":"c","object":"chat.completion.chunk","created":0,"model":"m",'
    chunk += b'"choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":null}]}'
    fake_provider.script(
        RawReply(b"data: " + chunk + b"\n\ndata: [DONE]\n\n", content_type="text/event-stream")
    )
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)


# Chunk shapes of self-hosted OpenAI-compatible servers, which the SDK's own stream reads without a word.
MINIMAL_SHAPES = {
    "minimal": Reply(text="Paris, of course.", minimal_chunks=True),
    "minimal-without-done": Reply(text="Paris, of course.", minimal_chunks=True, done=False),
    "minimal-without-finish-reason": Reply(
        text="Paris, of course.", minimal_chunks=True, finish_reason=False
    ),
    "minimal-without-finish-reason-or-done": Reply(
        text="Paris, of course.", minimal_chunks=True, finish_reason=False, done=False
    ),
    "full-without-done": Reply(text="Paris, of course.", done=False),
}


@pytest.mark.parametrize("reply", MINIMAL_SHAPES.values(), ids=MINIMAL_SHAPES.keys())
def test_stream_of_minimal_chunks_is_read_whole_with_its_usage(fake_provider, reply):
    fake_provider.script(reply)
    answer = complete(fake_provider, call(stream=True))
    (body,) = fake_provider.bodies()
    assert (answer.text, answer.finish_reason, answer.tool_calls) == ("Paris, of course.", "stop", ())
    assert answer.usage == Usage(
        count_prompt_tokens(body), 0, count_text_tokens("Paris, of course."), Provenance.PROVIDER_REPORTED
    )
    expected_ids = (
        ("chatcmpl-fake1", "gpt-4o-mini")
        if reply == MINIMAL_SHAPES["full-without-done"]
        else ("", "gpt-4o-mini")
    )
    assert (answer.response_id, answer.model_id) == expected_ids


def test_stream_of_minimal_chunks_is_read_the_same_on_an_event_loop(fake_provider):
    fake_provider.script(
        Reply(text="Paris, of course.", minimal_chunks=True, finish_reason=False, done=False)
    )
    adapter = OpenAICompatibleAdapter(config(fake_provider))
    provider_call = call(stream=True)

    async def read() -> list:
        stream = await adapter.astream(provider_call, adapter.request_body(provider_call))
        return [delta async for delta in stream]

    deltas = asyncio.run(read())
    adapter.close()
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Paris, of course."
    assert isinstance(deltas[-2], UsageDelta) and isinstance(deltas[-1], StreamFinish)
    assert (deltas[-1].reply.text, deltas[-1].reply.finish_reason) == ("Paris, of course.", "stop")
    assert deltas[-1].reply.usage == deltas[-2].usage


@pytest.mark.parametrize("finish_reason", [True, False])
def test_tool_calls_in_minimal_chunks_finish_with_tool_calls(fake_provider, finish_reason):
    fake_provider.script(
        Reply(tool_calls=Reply.tools(WEATHER).tool_calls, minimal_chunks=True, finish_reason=finish_reason)
    )
    answer = complete(fake_provider, call(stream=True, tool_specs=(WEATHER_SPEC,)))
    assert answer.tool_calls == (
        ToolCall(id="call_1", name="get_weather", arguments='{"city":"Paris","unit":"celsius"}'),
    )
    assert answer.finish_reason == "tool_calls"


def test_closing_chunk_without_a_delta_names_the_finish(fake_provider):
    chunks = [
        {"choices": [{"delta": {"content": "Par"}}]},
        {"choices": [{"delta": {"content": "is"}}]},
        {"choices": [{"finish_reason": "length"}]},
    ]
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
    fake_provider.script(RawReply(body, content_type="text/event-stream"))
    answer = complete(fake_provider, call(stream=True))
    assert (answer.text, answer.finish_reason, answer.usage) == ("Paris", "length", Usage.unavailable())


def test_minimal_stream_with_neither_finish_reason_nor_usage_is_a_connection_failure(fake_provider):
    # A body ended in order but saying nothing of its end: as likely a proxy that closed it mid-reply.
    fake_provider.script(
        Reply(text="Paris, of course.", minimal_chunks=True, finish_reason=False, include_usage=False)
    )
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)


@pytest.mark.parametrize(
    "chunk",
    [
        {"id": "c", "model": "m"},
        {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [{"id": "x"}]}}]},
        {"id": "c", "model": "m", "choices": [], "usage": 5},
        {"id": "c", "model": "m", "choices": ["stop"]},
        ["not", "an", "object"],
    ],
    ids=["no-choices", "tool-call-without-index", "usage-not-an-object", "choice-text", "list"],
)
def test_stream_chunk_without_a_required_field_is_malformed(fake_provider, chunk):
    body = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    fake_provider.script(RawReply(body, content_type="text/event-stream"))
    error = failure(fake_provider, call(stream=True))
    assert (error.failure_class, error.retryable) == (FailureClass.MALFORMED, False)


def test_reply_without_choices_is_malformed(fake_provider):
    fake_provider.script({"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": []})
    error = failure(fake_provider, call())
    assert (error.failure_class, error.retryable) == (FailureClass.MALFORMED, False)


def test_a_minimal_whole_reply_is_read_as_a_minimal_stream_is(fake_provider):
    # Some self-hosted servers answer with no id, model, index or usage, and a call without its type.
    call_ = {"function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    fake_provider.script(
        {"choices": [{"message": {"content": "Paris", "tool_calls": [call_]}, "finish_reason": "tool_calls"}]}
    )
    answer = complete(fake_provider, call())
    assert (answer.text, answer.finish_reason, answer.usage) == ("Paris", "tool_calls", Usage.unavailable())
    assert answer.tool_calls == (ToolCall(id="call_0", name="get_weather", arguments='{"city":"Paris"}'),)
    assert (answer.model_id, answer.response_id) == (call().model_id, "")


@pytest.mark.parametrize(
    "reply",
    [
        {"choices": [{"finish_reason": "stop"}]},
        {"choices": ["stop"]},
        {"choices": [{"message": {"content": "x", "tool_calls": [{"type": "function"}]}}]},
        {"choices": [{"message": {"content": "x", "tool_calls": [{"function": {"arguments": "{}"}}]}}]},
        {"choices": [{"message": {"content": "x"}}], "usage": 5},
    ],
    ids=["no-message", "choice-text", "call-without-function", "call-without-name", "usage-not-an-object"],
)
def test_a_whole_reply_without_a_required_field_is_malformed(fake_provider, reply):
    fake_provider.script(reply)
    error = failure(fake_provider, call())
    assert (error.failure_class, error.retryable) == (FailureClass.MALFORMED, False)


def test_nothing_listening_is_a_retryable_connection_failure():
    with FakeProvider() as fake:
        base_url = fake.openai_base_url
    error = failure(None, call(), base_url=base_url)
    assert (error.failure_class, error.retryable) == (FailureClass.CONNECTION, True)


def test_api_key_never_appears_in_errors_or_logs(caplog):
    caplog.set_level(logging.DEBUG)
    wrong_key = API_KEY[::-1]
    with FakeProvider(api_key=API_KEY) as fake:
        fake.script(Reply(text="ok"))
        error = failure(fake, call(), api_key=wrong_key)
    assert error.failure_class == FailureClass.AUTH
    assert error.__cause__ is None and error.__suppress_context__
    rendered = " ".join([str(error), repr(error), repr(error.as_dict()), caplog.text])
    assert wrong_key not in rendered
    assert API_KEY not in rendered
    assert "What is the capital" not in str(error.as_dict())
    assert "provider call failed: provider=openai-test failure_class=auth status=401" in caplog.text
    assert wrong_key not in repr(config(None, api_key=wrong_key))
