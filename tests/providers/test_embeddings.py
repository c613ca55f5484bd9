"""Embeddings at the provider boundary: the local provider's deterministic vectors, the
OpenAI-compatible adapter's reading of a reply against the loopback fake, and the dispatch's retries
and fallbacks, which follow a completion's policy."""

from __future__ import annotations

import asyncio
import math
import threading

import pytest

from providers.anthropic import AnthropicAdapter
from providers.dispatch import Target
from providers.embeddings import aembed_with_fallbacks, embed_with_fallbacks
from providers.failures import FailureClass, ProviderError
from providers.local import LocalAdapter
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.values import EmbeddingCall, ProviderConfig
from tests.fakes.provider_server import Reply, fake_vector, rate_limited, server_error, unauthorized


def local(**options) -> LocalAdapter:
    return LocalAdapter(ProviderConfig(identifier="local", kind="local", base_url="", options=options))


def test_the_local_provider_answers_the_same_unit_vector_for_the_same_input():
    call = EmbeddingCall(model_id="local-embed", inputs=("hello world", (1, 2, 3), "hello world"))

    first, again = local().embed(call), local().embed(call)

    assert first == again
    assert [len(vector) for vector in first.vectors] == [256, 256, 256]
    assert first.vectors[0] == first.vectors[2] != first.vectors[1]
    assert math.isclose(math.fsum(x * x for x in first.vectors[1]), 1.0, rel_tol=1e-9)
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (2 + 3 + 2, 0)


def test_the_local_provider_shortens_its_vectors_to_the_dimensions_asked():
    reply = local().embed(EmbeddingCall(model_id="local-embed", inputs=("hello",), dimensions=12))

    assert len(reply.vectors[0]) == 12


def test_an_adapter_without_embeddings_refuses_as_a_client_error():
    adapter = AnthropicAdapter(
        ProviderConfig(identifier="claude", kind="anthropic", base_url="http://127.0.0.1:9")
    )

    with pytest.raises(ProviderError) as refused:
        adapter.embed(EmbeddingCall(model_id="claude", inputs=("hello",)))

    assert refused.value.failure_class == FailureClass.CLIENT_ERROR


def fake_target(fake_provider, *, retries: int = 0) -> Target:
    config = ProviderConfig(
        identifier="fake",
        kind="openai_compatible",
        base_url=fake_provider.openai_base_url,
        max_retries=retries,
    )
    return Target(config, "text-embedding-3-small")


def test_the_openai_compatible_adapter_posts_embeddings_and_reads_the_vectors(fake_provider):
    adapter = OpenAICompatibleAdapter(fake_target(fake_provider).config)

    reply = adapter.embed(
        EmbeddingCall(model_id="text-embedding-3-small", inputs=("a", (5, 6)), dimensions=3)
    )

    assert fake_provider.bodies() == [
        {
            "model": "text-embedding-3-small",
            "input": ["a", [5, 6]],
            "encoding_format": "float",
            "dimensions": 3,
        }
    ]
    assert reply.vectors == (tuple(fake_vector("a", 3)), tuple(fake_vector([5, 6], 3)))
    assert (reply.usage.prompt_tokens, reply.model_id) == (1 + 2, "text-embedding-3-small")


def test_a_rate_limited_embedding_is_retried_and_a_refused_key_walks_no_fallback(fake_provider):
    fake_provider.script(rate_limited(retry_after=0), Reply(text="unused"))
    waits: list[float] = []
    call = EmbeddingCall(model_id="x", inputs=("a",))

    answered = embed_with_fallbacks([fake_target(fake_provider, retries=1)], call, sleep=waits.append)
    fake_provider.reset()
    fake_provider.script(unauthorized())
    with pytest.raises(ProviderError) as refused:
        embed_with_fallbacks(
            [fake_target(fake_provider), fake_target(fake_provider)], call, sleep=waits.append
        )

    assert [a.failure_class for a in answered.attempts] == [FailureClass.RATE_LIMIT, None]
    assert waits == [0.5]
    assert refused.value.failure_class == FailureClass.AUTH
    assert len(fake_provider.requests) == 1  # no fallback after a refused key


def test_on_an_event_loop_the_same_policy_runs_through_the_async_client(fake_provider):
    fake_provider.script(rate_limited(retry_after=0), Reply(), server_error(), Reply())
    call = EmbeddingCall(model_id="x", inputs=("a",), dimensions=3)
    # A server error on the first target (no retries) walks to the second, as the blocking driver does.
    targets = [fake_target(fake_provider), fake_target(fake_provider)]

    async def main():
        retried = await aembed_with_fallbacks([fake_target(fake_provider, retries=1)], call)
        return retried, await aembed_with_fallbacks(targets, call), threading.current_thread()

    retried, fell_back, loop_thread = asyncio.run(main())

    assert [a.failure_class for a in retried.attempts] == [FailureClass.RATE_LIMIT, None]
    assert retried.answer.vectors == (tuple(fake_vector("a", 3)),)
    assert [(a.target_index, a.failure_class) for a in fell_back.attempts] == [
        (0, FailureClass.SERVER_ERROR),
        (1, None),
    ]
    assert fell_back.served_index == 1
    assert loop_thread is threading.main_thread()
    assert len(fake_provider.requests) == 4
