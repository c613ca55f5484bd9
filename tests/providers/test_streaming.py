"""Provider streams as typed deltas: the real SDKs against the loopback fake speaking SSE, the offline
local provider, and the dispatcher's retries and fallbacks up to the first delta."""

from __future__ import annotations

import gc
import json
import random
import threading

import pytest
from prometheus_client import REGISTRY

from context_assembly.messages import Message, ToolCall, ToolSpec
from providers.anthropic import AnthropicAdapter
from providers.attempts import opened
from providers.dispatch import Target, stream_with_fallbacks
from providers.failures import FailureClass, ProviderError
from providers.local import LocalAdapter
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.streams import StreamFinish, TextDelta, ToolCallDelta, UsageDelta
from providers.values import ProviderCall, ProviderConfig
from tests.fakes.provider_server import FakeProvider, RawReply, Reply, server_error, unauthorized

API_KEY = "-".join(["test", "key", str(random.Random(71).randint(10_000, 99_999)), "stream"])
USER = Message(role="user", content="Weather in Paris?")
SPEC = ToolSpec(name="get_weather", description="Weather.", parameters={"type": "object", "properties": {}})
WEATHER = ("call_1", "get_weather", {"city": "Paris", "unit": "celsius"})
TEXT = "Let me check the weather for you."


def config(fake: FakeProvider, kind: str, retries: int = 0, identifier: str = "") -> ProviderConfig:
    base_url = fake.openai_base_url if kind == "openai_compatible" else fake.anthropic_base_url
    return ProviderConfig(
        identifier=identifier or kind,
        kind=kind,
        base_url=base_url,
        api_key=API_KEY,
        timeout_seconds=5.0,
        max_retries=retries,
    )


def adapter(fake: FakeProvider, kind: str):
    adapter_class = OpenAICompatibleAdapter if kind == "openai_compatible" else AnthropicAdapter
    return adapter_class(config(fake, kind))


def call(stream: bool = True, **overrides) -> ProviderCall:
    values = {"model_id": "m-1", "messages": (USER,), "max_tokens": 64, "stream": stream}
    return ProviderCall(**{**values, **overrides})


KINDS = ["openai_compatible", "anthropic"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_yields_text_pieces_tool_call_pieces_usage_then_the_whole_reply(fake_provider, kind):
    fake_provider.script(Reply.tools(WEATHER, text=TEXT))
    provider = adapter(fake_provider, kind)
    provider_call = call(tool_specs=(SPEC,))
    with provider.stream(provider_call, provider.request_body(provider_call)) as stream:
        deltas = list(stream)
    provider.close()
    texts = [d.text for d in deltas if isinstance(d, TextDelta)]
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert texts == [TEXT[i : i + 8] for i in range(0, len(TEXT), 8)]  # the fake's pieces, as sent
    assert (calls[0].index, calls[0].id, calls[0].name) == (0, "call_1", "get_weather")
    assert all((c.index, c.id, c.name) == (0, None, None) for c in calls[1:])
    assert "".join(c.arguments for c in calls) == '{"city":"Paris","unit":"celsius"}'
    assert isinstance(deltas[-2], UsageDelta) and isinstance(deltas[-1], StreamFinish)
    reply = deltas[-1].reply
    assert (reply.text, reply.finish_reason) == (TEXT, "tool_calls")
    assert reply.tool_calls == (ToolCall("call_1", "get_weather", '{"city":"Paris","unit":"celsius"}'),)
    assert deltas[-2].usage == reply.usage
    assert reply.usage.completion_tokens is not None
    (body,) = fake_provider.bodies()
    assert body["stream"] is True
    if kind == "openai_compatible":
        assert body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("kind", KINDS)
def test_the_streamed_reply_equals_the_whole_reply_of_the_same_call(fake_provider, kind):
    fake_provider.script(Reply.tools(WEATHER, text=TEXT), Reply.tools(WEATHER, text=TEXT))
    provider = adapter(fake_provider, kind)
    whole = provider.complete(call(stream=False, tool_specs=(SPEC,)))
    streamed_call = call(tool_specs=(SPEC,))
    with provider.stream(streamed_call, provider.request_body(streamed_call)) as stream:
        finish = list(stream)[-1]
    provider.close()
    assert isinstance(finish, StreamFinish)
    assert finish.reply.text == whole.text
    assert finish.reply.tool_calls == whole.tool_calls
    assert finish.reply.finish_reason == whole.finish_reason
    assert finish.reply.usage.completion_tokens == whole.usage.completion_tokens


@pytest.mark.parametrize("kind", KINDS)
def test_a_delta_arrives_while_the_provider_has_not_sent_the_rest(fake_provider, kind):
    gate = threading.Event()
    fake_provider.script(Reply(text="first piece, then the rest", gate=gate))
    provider = adapter(fake_provider, kind)
    with provider.stream(call(), provider.request_body(call())) as stream:
        first = next(delta for delta in stream if isinstance(delta, TextDelta))
        assert first == TextDelta("first pi")
        assert not gate.is_set()  # the fake is still holding everything after its first piece
        gate.set()
        rest = "".join(d.text for d in stream if isinstance(d, TextDelta))
    provider.close()
    assert rest == "ece, then the rest"


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_cut_short_raises_a_connection_failure_never_a_quiet_end(fake_provider, kind):
    fake_provider.script(Reply(text="abcdefgh" * 8, truncate_stream=True))
    provider = adapter(fake_provider, kind)
    stream = provider.stream(call(), provider.request_body(call()))
    with pytest.raises(ProviderError) as raised:
        list(stream)
    provider.close()
    assert raised.value.failure_class == FailureClass.CONNECTION
    assert stream.closed


@pytest.mark.parametrize("kind", KINDS)
def test_an_error_status_fails_when_the_stream_opens(fake_provider, kind):
    fake_provider.script(unauthorized())
    provider = adapter(fake_provider, kind)
    with pytest.raises(ProviderError) as raised:
        provider.stream(call(), provider.request_body(call()))
    provider.close()
    assert (raised.value.failure_class, raised.value.status) == (FailureClass.AUTH, 401)


def test_stream_refuses_a_call_that_does_not_ask_for_one(fake_provider):
    provider = adapter(fake_provider, "openai_compatible")
    with pytest.raises(ValueError, match="stream=True"):
        provider.stream(call(stream=False), {})
    provider.close()
    assert fake_provider.requests == []


def test_the_local_provider_streams_its_reply_a_word_at_a_time():
    local = LocalAdapter(
        ProviderConfig(
            identifier="local",
            kind="local",
            base_url="",
            options={"script": [{"text": "One two  three.", "tool_calls": [{"name": "t", "arguments": {}}]}]},
        )
    )
    offered = call(tool_specs=(ToolSpec(name="t"),))
    deltas = list(local.stream(offered, local.request_body(offered)))
    assert [d for d in deltas if isinstance(d, TextDelta)] == [
        TextDelta("One "),
        TextDelta("two  "),
        TextDelta("three."),
    ]
    assert [d for d in deltas if isinstance(d, ToolCallDelta)] == [ToolCallDelta(0, "call_0_0", "t", "{}")]
    assert isinstance(deltas[-1], StreamFinish)
    assert deltas[-1].reply == local.complete(call(stream=False, tool_specs=(ToolSpec(name="t"),)))


# --- the dispatcher -------------------------------------------------------------------------------------


@pytest.fixture
def second_fake():
    with FakeProvider() as fake:
        yield fake


def target(fake: FakeProvider, identifier: str, retries: int = 0) -> Target:
    return Target(config(fake, "openai_compatible", retries, identifier), "m-1")


def test_a_failure_before_the_first_delta_is_retried_then_falls_back(fake_provider, second_fake):
    fake_provider.script(server_error(), server_error())
    second_fake.script("served by the fallback")
    waits: list[float] = []
    dispatch = stream_with_fallbacks(
        [target(fake_provider, "primary", retries=1), target(second_fake, "fallback")],
        call(),
        sleep=waits.append,
    )
    with dispatch.answer:
        text = "".join(d.text for d in dispatch.answer if isinstance(d, TextDelta))
    assert text == "served by the fallback"
    assert dispatch.served_index == 1
    assert [(a.provider, a.failure_class) for a in dispatch.attempts] == [
        ("primary", FailureClass.SERVER_ERROR),
        ("primary", FailureClass.SERVER_ERROR),
        ("fallback", None),
    ]
    assert waits == [0.5]
    assert (len(fake_provider.requests), len(second_fake.requests)) == (2, 1)


def test_a_stream_that_ends_before_saying_anything_falls_back(fake_provider, second_fake):
    role_only = {"id": "c-1", "object": "chat.completion.chunk", "created": 1, "model": "m-1"}
    role_only["choices"] = [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
    ]
    fake_provider.script(
        RawReply(b"data: " + json.dumps(role_only).encode() + b"\n\n", content_type="text/event-stream")
    )
    second_fake.script("fallback answer")
    dispatch = stream_with_fallbacks(
        [target(fake_provider, "primary"), target(second_fake, "fallback")], call()
    )
    with dispatch.answer:
        assert "".join(d.text for d in dispatch.answer if isinstance(d, TextDelta)) == "fallback answer"
    assert dispatch.attempts[0].failure_class == FailureClass.CONNECTION


def test_a_failure_after_the_first_delta_is_never_retried_nor_sent_elsewhere(fake_provider, second_fake):
    fake_provider.script(Reply(text="abcdefgh" * 8, truncate_stream=True), "not asked again")
    second_fake.script("not asked either")
    dispatch = stream_with_fallbacks(
        [target(fake_provider, "primary", retries=2), target(second_fake, "fallback")], call()
    )
    received = []
    with pytest.raises(ProviderError) as raised, dispatch.answer:
        for delta in dispatch.answer:
            received.append(delta)
    assert raised.value.failure_class == FailureClass.CONNECTION
    assert received[0] == TextDelta("abcdefgh")
    assert (len(fake_provider.requests), len(second_fake.requests)) == (1, 0)
    assert (fake_provider.pending(), second_fake.pending()) == (1, 1)


def test_a_non_retryable_failure_before_the_first_delta_stops_everything(fake_provider, second_fake):
    fake_provider.script(unauthorized())
    with pytest.raises(ProviderError) as raised:
        stream_with_fallbacks(
            [target(fake_provider, "primary", retries=2), target(second_fake, "fallback")], call()
        )
    assert raised.value.failure_class == FailureClass.AUTH
    assert [a["provider"] for a in raised.value.extra["attempts"]] == ["primary"]
    assert second_fake.requests == []


def _stream_outcomes(provider: str) -> dict[str, float]:
    return {
        sample.labels["outcome"]: sample.value
        for metric in REGISTRY.collect()
        if metric.name == "govctx_provider_calls"
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels.get("provider") == provider
    }


def test_a_stream_read_to_its_finish_then_closed_counts_once_as_finished(fake_provider):
    fake_provider.script(Reply(text=TEXT))
    provider = OpenAICompatibleAdapter(
        config(fake_provider, "openai_compatible", identifier="read-to-finish")
    )

    stream = opened(provider, call(), provider.request_body(call()))
    deltas = []
    for delta in stream:
        deltas.append(delta)
        if isinstance(delta, StreamFinish):
            break  # the reader stops at the reply, before the stream's own end
    stream.close()
    del stream
    gc.collect()  # nothing of the reading is left to finalise, nor counted again

    assert isinstance(deltas[-1], StreamFinish)
    assert _stream_outcomes(provider.config.identifier) == {"ok": 1.0}


def test_a_stream_closed_before_its_end_counts_as_closed_when_it_is_closed(fake_provider):
    fake_provider.script(Reply(text=TEXT))
    provider = OpenAICompatibleAdapter(config(fake_provider, "openai_compatible", identifier="left-early"))

    stream = opened(provider, call(), provider.request_body(call()))
    next(stream)
    stream.close()  # counted here, not whenever the garbage collector finalises the reading

    assert _stream_outcomes(provider.config.identifier) == {"closed": 1.0}
