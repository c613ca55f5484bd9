"""Retries, backoff and fallbacks, against two loopback fakes and the real SDKs."""

from __future__ import annotations

import random

import pytest

from context_assembly.messages import Message
from providers.adapters import adapter_for
from providers.anthropic import AnthropicAdapter
from providers.dispatch import (
    Attempt,
    PreparedCall,
    TargetSkipped,
    backoff_seconds,
    complete_with_fallbacks,
)
from providers.failures import FailureClass, ProviderError
from providers.local import LocalAdapter
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.values import ProviderCall, ProviderConfig
from tests.fakes.provider_server import (
    FakeProvider,
    Reply,
    context_length_exceeded,
    rate_limited,
    server_error,
    unauthorized,
)

API_KEY = "-".join(["test", "key", str(random.Random(53).randint(10_000, 99_999)), "dispatch"])
CALL = ProviderCall(
    model_id="unused",
    messages=(Message(role="user", content="Secret plan: ship on Friday."),),
    max_tokens=32,
)


def openai_target(fake: FakeProvider, identifier: str, retries: int, model: str = "gpt-4o-mini"):
    config = ProviderConfig(
        identifier=identifier,
        kind="openai_compatible",
        base_url=fake.openai_base_url,
        api_key=API_KEY,
        timeout_seconds=0.3,
        max_retries=retries,
    )
    return config, model


def anthropic_target(fake: FakeProvider, identifier: str, retries: int, model: str = "claude-x"):
    config = ProviderConfig(
        identifier=identifier,
        kind="anthropic",
        base_url=fake.anthropic_base_url,
        api_key=API_KEY,
        timeout_seconds=0.3,
        max_retries=retries,
    )
    return config, model


@pytest.fixture
def second_fake():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def waits() -> list[float]:
    return []


def test_retryable_failures_are_retried_honouring_retry_after_then_succeed(fake_provider, waits):
    fake_provider.script(rate_limited(retry_after=3), server_error(), "Shipped.")
    result = complete_with_fallbacks([openai_target(fake_provider, "primary", 2)], CALL, sleep=waits.append)
    assert (result.answer.text, result.served_index) == ("Shipped.", 0)
    assert waits == [3.0, 1.0]  # the retry-after, then the second backoff step (0.5 * 2)
    assert result.attempts == (
        Attempt(0, "primary", "gpt-4o-mini", FailureClass.RATE_LIMIT, 3.0, 429),
        Attempt(0, "primary", "gpt-4o-mini", FailureClass.SERVER_ERROR, None, 500),
        Attempt(0, "primary", "gpt-4o-mini", None),
    )
    assert [body["model"] for body in fake_provider.bodies()] == ["gpt-4o-mini"] * 3


def test_backoff_doubles_from_half_a_second_and_is_capped():
    assert [backoff_seconds(n, None) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff_seconds(0, 0.1) == 0.5  # a shorter retry-after never shortens the backoff
    assert backoff_seconds(1, 120.0) == 30.0  # a huge retry-after is capped


def test_timeouts_are_retried_with_backoff(fake_provider, waits):
    fake_provider.script(Reply(text="late", latency=0.6), Reply(text="late", latency=0.6), "On time.")
    result = complete_with_fallbacks([anthropic_target(fake_provider, "claude", 2)], CALL, sleep=waits.append)
    assert result.answer.text == "On time."
    assert waits == [0.5, 1.0]
    assert [a.failure_class for a in result.attempts] == [FailureClass.TIMEOUT, FailureClass.TIMEOUT, None]


@pytest.mark.parametrize("reply", [unauthorized(), context_length_exceeded()], ids=["auth", "context"])
def test_non_retryable_failure_stops_without_retrying_or_walking_fallbacks(
    fake_provider, second_fake, waits, reply
):
    fake_provider.script(reply)
    targets = [openai_target(fake_provider, "primary", 3), anthropic_target(second_fake, "fallback", 3)]
    with pytest.raises(ProviderError) as raised:
        complete_with_fallbacks(targets, CALL, sleep=waits.append)
    assert raised.value.retryable is False
    assert len(fake_provider.requests) == 1
    assert second_fake.requests == []
    assert waits == []
    assert raised.value.attempts == (
        Attempt(0, "primary", "gpt-4o-mini", raised.value.failure_class, None, raised.value.status),
    )


def test_exhausted_retryable_target_falls_back_to_the_next(fake_provider, second_fake, waits):
    fake_provider.script(server_error(), server_error())
    second_fake.script("From the fallback.")
    targets = [
        openai_target(fake_provider, "primary", 1),
        anthropic_target(second_fake, "fallback", 1, "claude-y"),
    ]
    result = complete_with_fallbacks(targets, CALL, sleep=waits.append)
    assert (result.answer.text, result.served_index, result.answer.model_id) == (
        "From the fallback.",
        1,
        "claude-y",
    )
    assert waits == [0.5]  # between the two tries of the primary; none before the fallback
    assert [(a.target_index, a.provider, a.model_id, a.failure_class) for a in result.attempts] == [
        (0, "primary", "gpt-4o-mini", FailureClass.SERVER_ERROR),
        (0, "primary", "gpt-4o-mini", FailureClass.SERVER_ERROR),
        (1, "fallback", "claude-y", None),
    ]
    assert [body["model"] for body in second_fake.bodies()] == ["claude-y"]


def test_all_targets_failing_raise_the_last_error_listing_every_attempt(fake_provider, second_fake, waits):
    fake_provider.script(server_error())
    second_fake.script(rate_limited(retry_after=2), rate_limited(retry_after=2))
    targets = [openai_target(fake_provider, "primary", 0), anthropic_target(second_fake, "fallback", 1)]
    with pytest.raises(ProviderError) as raised:
        complete_with_fallbacks(targets, CALL, sleep=waits.append)
    error = raised.value
    assert (error.provider, error.failure_class, error.retryable) == (
        "fallback",
        FailureClass.RATE_LIMIT,
        True,
    )
    assert waits == [2.0]
    assert error.extra["attempts"] == [
        {"target_index": 0, "provider": "primary", "model_id": "gpt-4o-mini", "failure_class": "server_error",
         "retry_after": None, "status": 500},
        {"target_index": 1, "provider": "fallback", "model_id": "claude-x", "failure_class": "rate_limit",
         "retry_after": 2.0, "status": 429},
        {"target_index": 1, "provider": "fallback", "model_id": "claude-x", "failure_class": "rate_limit",
         "retry_after": 2.0, "status": 429},
    ]  # fmt: skip
    rendered = repr(error.as_dict())
    assert "Secret plan" not in rendered and API_KEY not in rendered


def test_a_failing_remote_provider_falls_back_to_the_local_one(fake_provider, waits):
    fake_provider.script(server_error())
    local = ProviderConfig(identifier="local", kind="local", base_url="", max_retries=0)
    result = complete_with_fallbacks(
        [openai_target(fake_provider, "primary", 0), (local, "local-demo")], CALL, sleep=waits.append
    )
    assert result.served_index == 1
    assert result.answer.text.startswith("Local model (offline): received 1 messages")
    assert waits == []


def test_unknown_kind_is_a_non_retryable_configuration_failure(second_fake, waits):
    broken = ProviderConfig(identifier="broken", kind="gemini", base_url="http://127.0.0.1:9", max_retries=3)
    with pytest.raises(ProviderError) as raised:
        adapter_for(broken)
    assert (raised.value.failure_class, raised.value.retryable) == (FailureClass.CONFIGURATION, False)
    with pytest.raises(ProviderError) as dispatched:
        complete_with_fallbacks(
            [(broken, "m"), openai_target(second_fake, "ok", 0)], CALL, sleep=waits.append
        )
    assert dispatched.value.attempts == (Attempt(0, "broken", "m", FailureClass.CONFIGURATION),)
    assert second_fake.requests == []


def test_no_targets_is_a_configuration_failure():
    with pytest.raises(ProviderError) as raised:
        complete_with_fallbacks([], CALL, sleep=pytest.fail)
    assert raised.value.failure_class == FailureClass.CONFIGURATION


@pytest.mark.parametrize(
    "kind, adapter_class",
    [
        ("openai_compatible", OpenAICompatibleAdapter),
        ("anthropic", AnthropicAdapter),
        ("local", LocalAdapter),
    ],
)
def test_adapter_for_picks_the_adapter_by_kind(kind, adapter_class):
    adapter = adapter_for(ProviderConfig(identifier="p", kind=kind, base_url="http://127.0.0.1:9"))
    assert type(adapter) is adapter_class
    adapter.close()


def skip_index(skipped: int):
    """A prepare hook that skips target ``skipped`` and gives every other target ``CALL``."""

    def prepare(index: int) -> PreparedCall:
        if index == skipped:
            raise TargetSkipped("context_overflow", {"estimated": 9_000, "budget": 3_850})
        return PreparedCall(call=CALL, guard=None)

    return prepare


def test_a_skipped_target_is_never_sent_and_listed_as_an_attempt(fake_provider, second_fake, waits):
    fake_provider.script(server_error())
    second_fake.script("never sent")
    targets = [openai_target(fake_provider, "primary", 0), openai_target(second_fake, "small", 0, "gpt-4")]
    with pytest.raises(ProviderError) as raised:
        complete_with_fallbacks(targets, CALL, sleep=waits.append, prepare=skip_index(1))
    assert raised.value.failure_class == FailureClass.SERVER_ERROR
    assert second_fake.requests == []
    assert raised.value.extra["attempts"][1] == {
        "target_index": 1, "provider": "small", "model_id": "gpt-4", "failure_class": None,
        "retry_after": None, "status": None, "skipped": "context_overflow",
    }  # fmt: skip


def test_when_every_target_is_skipped_nothing_is_sent_and_the_error_is_context_overflow(fake_provider):
    targets = [openai_target(fake_provider, "only", 0)]
    with pytest.raises(ProviderError) as raised:
        complete_with_fallbacks(targets, CALL, prepare=skip_index(0))
    assert (raised.value.failure_class, raised.value.retryable) == (FailureClass.CONTEXT_OVERFLOW, False)
    assert fake_provider.requests == []
    assert [a.skipped for a in raised.value.attempts] == ["context_overflow"]
