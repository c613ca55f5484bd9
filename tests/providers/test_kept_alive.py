"""A streamed call's connection goes back to the pool (providers.kept_alive): the real SDK's blocking
client against the loopback fake, counting the connections the fake accepted."""

from __future__ import annotations

import threading
import time

import openai

from context_assembly.messages import Message
from providers.kept_alive import DRAIN_SECONDS
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.streams import StreamFinish, TextDelta
from providers.values import ProviderCall, ProviderConfig
from tests.fakes.provider_server import FakeProvider, Reply

TEXT = "A short answer, streamed in pieces."


def adapter(fake: FakeProvider) -> OpenAICompatibleAdapter:
    config = ProviderConfig(
        identifier="kept", kind="openai_compatible", base_url=fake.openai_base_url, timeout_seconds=10.0
    )
    return OpenAICompatibleAdapter(config)


def call(stream: bool = True) -> ProviderCall:
    return ProviderCall(
        model_id="m-1", messages=(Message(role="user", content="Hi."),), max_tokens=64, stream=stream
    )


def streamed(provider: OpenAICompatibleAdapter) -> str:
    provider_call = call()
    with provider.stream(provider_call, provider.request_body(provider_call)) as stream:
        deltas = list(stream)
    assert isinstance(deltas[-1], StreamFinish)
    return deltas[-1].reply.text


def test_streamed_and_whole_calls_share_one_connection(fake_provider):
    fake_provider.default_reply = Reply(text=TEXT)
    provider = adapter(fake_provider)
    try:
        assert [streamed(provider) for _ in range(3)] == [TEXT] * 3
        assert [provider.complete(call(stream=False)).text for _ in range(2)] == [TEXT] * 2
        assert streamed(provider) == TEXT
    finally:
        provider.close()
    assert len(fake_provider.requests) == 6
    assert fake_provider.connections_accepted == 1


def test_the_sdk_alone_opens_a_connection_per_stream(fake_provider):
    """What the hook is for: if this fails, the SDK keeps its streams' connections itself."""
    fake_provider.default_reply = Reply(text=TEXT)
    client = openai.OpenAI(base_url=fake_provider.openai_base_url, api_key="unused", max_retries=0)
    try:
        for _ in range(3):
            chunks = client.chat.completions.create(
                model="m-1", messages=[{"role": "user", "content": "Hi."}], stream=True
            )
            assert [chunk for chunk in chunks]
    finally:
        client.close()
    assert fake_provider.connections_accepted == 3


def test_the_environments_proxy_still_carries_the_calls(fake_provider, monkeypatch):
    """The hook leaves the client its transports: a proxy named by the environment carries the
    calls (the fake serves the absolute URLs a forward proxy receives), on one connection."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", fake_provider.base_url)
    fake_provider.default_reply = Reply(text=TEXT)
    config = ProviderConfig(
        identifier="proxied",
        kind="openai_compatible",
        base_url="http://provider.invalid/v1",
        timeout_seconds=10.0,
    )
    provider = OpenAICompatibleAdapter(config)
    try:
        assert [streamed(provider) for _ in range(2)] == [TEXT] * 2
    finally:
        provider.close()
    assert [request.headers["host"] for request in fake_provider.requests] == ["provider.invalid"] * 2
    assert fake_provider.connections_accepted == 1


def test_a_body_held_open_after_done_is_given_up_and_its_connection_not_reused(fake_provider):
    hold = 5.0
    fake_provider.script(Reply(text=TEXT, hold_after_done=hold), Reply(text=TEXT))
    provider = adapter(fake_provider)
    try:
        started = time.monotonic()
        assert streamed(provider) == TEXT
        waited = time.monotonic() - started
        assert streamed(provider) == TEXT
    finally:
        provider.close()
    assert DRAIN_SECONDS <= waited < hold  # gave up on the held body instead of waiting it out
    assert fake_provider.connections_accepted == 2


def test_a_stream_left_before_done_is_closed_at_once_and_not_drained(fake_provider):
    gate = threading.Event()
    fake_provider.script(Reply(text=TEXT, gate=gate), Reply(text=TEXT))
    provider = adapter(fake_provider)
    try:
        provider_call = call()
        with provider.stream(provider_call, provider.request_body(provider_call)) as stream:
            first = next(iter(stream))
            started = time.monotonic()
        closed_in = time.monotonic() - started
        gate.set()
        assert isinstance(first, TextDelta)
        assert closed_in < DRAIN_SECONDS  # the provider still holds the rest: nothing waited for it
        assert streamed(provider) == TEXT
    finally:
        gate.set()
        provider.close()
    assert fake_provider.connections_accepted == 2
