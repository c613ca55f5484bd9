"""Embeddings across the provider boundary: one call, its reply, and its dispatch over the targets.

An embedding call is not a completion: no messages, no tools, no reply limit, no stream. It carries the
inputs (each a text, or a token array for a model whose tokenizer is known) exactly as they go on the
wire: the runtime redacted every text and every decoded token array before building it, and the body
adds nothing an adapter derives from them, so the per-input pass is the pass over the final payload
(``agents/runtime/embedding.py``).

The dispatch follows the completion's policy (``providers/dispatch.py``) with the same figures: each
target up to ``1 + max_retries`` attempts, only retryable failures retried after
:func:`~providers.dispatch.backoff_seconds`, a non-retryable failure stopping everything, the next
target tried when one's retries are exhausted, and every attempt listed on the last error. Each
attempt is traced (an ``embeddings {model}`` span), counted and timed as a completion's is. The policy
is one generator (:func:`embedding_walk`) with two drivers: blocking (:func:`embed_with_fallbacks`) and
on an event loop (:func:`aembed_with_fallbacks`, what a request served under ASGI awaits).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any

from opentelemetry.trace import SpanKind

from config.tracing import span_annotate, traced_span
from providers.adapters import ADAPTER_POOL
from providers.dispatch import Attempt, Dispatched, Target, backoff_seconds
from providers.failures import FailureClass, ProviderError
from providers.metrics import failure_class, provider_call_timed, provider_call_timed_async
from providers.telemetry import GEN_AI_PROVIDERS
from providers.values import EmbeddingCall, EmbeddingReply, ProviderConfig


@dataclass(frozen=True)
class EmbedStep:
    """One attempt the policy asks for: ``call`` to ``config``'s provider."""

    config: ProviderConfig
    call: EmbeddingCall


@dataclass(frozen=True)
class WaitStep:
    """A backoff the policy asks for before its next attempt."""

    seconds: float


EmbeddingWalk = Generator[EmbedStep | WaitStep, EmbeddingReply | None, Dispatched[EmbeddingReply]]


def embedding_walk(targets: Sequence[Target], call: EmbeddingCall) -> EmbeddingWalk:
    """The policy of the module docstring as the steps it asks for; a driver makes each (sending back
    the reply of an :class:`EmbedStep`, or throwing its :class:`ProviderError` in). Returns what the
    first target that answered answered; raises :class:`ProviderError` with every attempt."""
    attempts: list[Attempt] = []
    error: ProviderError | None = None
    for index, target in enumerate(targets):
        config, model_id, _ = Target(*target)
        target_call = EmbeddingCall(model_id=model_id, inputs=call.inputs, dimensions=call.dimensions)
        for retry in range(1 + config.max_retries):
            if retry:
                assert error is not None
                yield WaitStep(backoff_seconds(retry - 1, error.retry_after))
            try:
                reply = yield EmbedStep(config, target_call)
            except ProviderError as exc:
                attempts.append(
                    Attempt(
                        index, config.identifier, model_id, exc.failure_class, exc.retry_after, exc.status
                    )
                )
                error = exc
                if not exc.retryable:
                    break
                continue
            assert reply is not None
            attempts.append(Attempt(index, config.identifier, model_id, None))
            return Dispatched(reply, index, tuple(attempts))
        if error is not None and not error.retryable:
            break
    if error is None:
        error = ProviderError(
            "no provider to send the call to", failure_class=FailureClass.CONFIGURATION, provider=""
        )
    error.attempts = tuple(attempts)
    error.extra = {**error.extra, "attempts": [_attempt_dict(attempt) for attempt in attempts]}
    raise error


def embed_with_fallbacks(
    targets: Sequence[Target], call: EmbeddingCall, *, sleep: Callable[[float], None] = time.sleep
) -> Dispatched[EmbeddingReply]:
    """``call`` answered by the first target that answers it (the policy of the module docstring),
    each attempt blocking; ``call.model_id`` is replaced by each target's. Raises
    :class:`ProviderError` with every attempt."""
    walk = embedding_walk(targets, call)
    sent: EmbeddingReply | None = None
    error: ProviderError | None = None
    while True:
        try:
            step = walk.throw(error) if error is not None else walk.send(sent)
        except StopIteration as stop:
            return stop.value
        sent, error = None, None
        if isinstance(step, WaitStep):
            sleep(step.seconds)
            continue
        adapter = ADAPTER_POOL.get(step.config)
        try:
            with _span(step.config, step.call.model_id):
                sent = provider_call_timed(
                    partial(adapter.embed, step.call),
                    provider=step.config.identifier,
                    model=step.call.model_id,
                )
                span_annotate({"gen_ai.usage.input_tokens": sent.usage.prompt_tokens})
        except ProviderError as exc:
            error = exc


async def aembed_with_fallbacks(targets: Sequence[Target], call: EmbeddingCall) -> Dispatched[EmbeddingReply]:
    """:func:`embed_with_fallbacks` on an event loop: each attempt through the adapter's async client
    (:meth:`~providers.base.ProviderAdapter.aembed`), each backoff an ``asyncio.sleep``, so the wait
    for the provider holds no thread."""
    walk = embedding_walk(targets, call)
    sent: EmbeddingReply | None = None
    error: ProviderError | None = None
    while True:
        try:
            step = walk.throw(error) if error is not None else walk.send(sent)
        except StopIteration as stop:
            return stop.value
        sent, error = None, None
        if isinstance(step, WaitStep):
            await asyncio.sleep(step.seconds)
            continue
        adapter = ADAPTER_POOL.get(step.config)
        try:
            with _span(step.config, step.call.model_id):
                sent = await provider_call_timed_async(
                    partial(adapter.aembed, step.call),
                    provider=step.config.identifier,
                    model=step.call.model_id,
                )
                span_annotate({"gen_ai.usage.input_tokens": sent.usage.prompt_tokens})
        except ProviderError as exc:
            error = exc


def _span(config: ProviderConfig, model: str) -> AbstractContextManager[Any]:
    attributes = {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": GEN_AI_PROVIDERS.get(config.kind, config.kind),
        "gen_ai.request.model": model,
        "govctx.provider": config.identifier,
    }
    return traced_span(
        f"embeddings {model}", kind=SpanKind.CLIENT, attributes=attributes, error_type=failure_class
    )


def _attempt_dict(attempt: Attempt) -> dict[str, object]:
    return {
        "target_index": attempt.target_index,
        "provider": attempt.provider,
        "model_id": attempt.model_id,
        "failure_class": attempt.failure_class.value if attempt.failure_class else None,
        "retry_after": attempt.retry_after,
        "status": attempt.status,
    }
