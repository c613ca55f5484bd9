"""The provider calls' Prometheus series, recorded per attempt by the dispatcher (through
``providers/telemetry.py``); the runtime's own series are in ``agents/metrics.py``.

Served by ``/metrics`` (``config/metrics.py``, which also explains the multiprocess mode). Every label
value is an identifier or a vocabulary value: provider identifiers and model ids from the catalogue,
failure classes, token types. Never content.

| series | labels | recorded by |
|---|---|---|
| ``govctx_provider_calls_total`` | ``provider``, ``model``, ``outcome`` (``ok``, the failure class, or ``closed`` for a stream its reader left) | the dispatcher, per attempt (through ``providers/telemetry.py``); embeddings alike (``providers/embeddings.py``) |
| ``govctx_provider_call_duration_seconds`` | the same (histogram) | the dispatcher, per attempt |
| ``govctx_tokens_total`` | ``model``, ``type`` (prompt, completion, cached) | the dispatcher, provider-reported usage; ``agents/runtime/budget.py``, what an abandoned send or a broken stream was charged |
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from prometheus_client import Counter, Histogram

from providers.values import Usage

# The GenAI semantic conventions' buckets for a client operation's duration: 10 ms to 82 s, doubling.
DURATION_BUCKETS = tuple(0.01 * 2**n for n in range(14))

PROVIDER_CALLS = Counter(
    "govctx_provider_calls_total", "Provider call attempts by outcome.", ["provider", "model", "outcome"]
)
PROVIDER_CALL_SECONDS = Histogram(
    "govctx_provider_call_duration_seconds",
    "Provider call attempts' wall time.",
    ["provider", "model", "outcome"],
    buckets=DURATION_BUCKETS,
)
TOKENS = Counter("govctx_tokens_total", "Provider-reported tokens by model and type.", ["model", "type"])


def failure_class(error: BaseException) -> str:
    """A ``ProviderError``'s failure class (``timeout``, ``rate_limit``, …); ``unknown`` otherwise."""
    return str(getattr(error, "failure_class", "") or "unknown")


class _Reported(Protocol):
    @property
    def usage(self) -> Usage: ...


Reply = TypeVar("Reply", bound=_Reported)


def provider_call_timed(complete: Callable[[], Reply], *, provider: str, model: str) -> Reply:
    """``complete()`` (one attempt of a provider call), counted and timed by provider, model and
    outcome (``ok``, or the ``failure_class`` of the ``ProviderError`` it raised); the reply's
    provider-reported tokens counted by model. Raises what ``complete`` raises."""
    started = time.perf_counter()
    try:
        reply = complete()
    except Exception as error:
        _provider_call(provider, model, failure_class(error), started)
        raise
    _provider_call(provider, model, "ok", started)
    tokens_counted(model, reply.usage)
    return reply


async def provider_call_timed_async(
    complete: Callable[[], Awaitable[Reply]], *, provider: str, model: str
) -> Reply:
    """:func:`provider_call_timed` of an attempt awaited on an event loop."""
    started = time.perf_counter()
    try:
        reply = await complete()
    except Exception as error:
        _provider_call(provider, model, failure_class(error), started)
        raise
    _provider_call(provider, model, "ok", started)
    tokens_counted(model, reply.usage)
    return reply


def provider_stream_ended(
    *,
    provider: str,
    model: str,
    started: float,
    error: BaseException | None = None,
    usage: Usage | None = None,
    outcome: str = "ok",
) -> None:
    """One attempt of a streamed provider call, counted and timed as :func:`provider_call_timed`
    counts a whole one: from ``started`` (``time.perf_counter()`` before the request) to the stream's
    end, or to the ``error`` that ended it (``outcome`` names an end without error: ``ok``, or
    ``closed`` when its reader went away); the reply's tokens counted when the stream finished."""
    _provider_call(provider, model, failure_class(error) if error is not None else outcome, started)
    if usage is not None:
        tokens_counted(model, usage)


def _provider_call(provider: str, model: str, outcome: str, started: float) -> None:
    PROVIDER_CALLS.labels(provider=provider, model=model, outcome=outcome).inc()
    PROVIDER_CALL_SECONDS.labels(provider=provider, model=model, outcome=outcome).observe(
        time.perf_counter() - started
    )


def tokens_counted(model: str, usage: Usage) -> None:
    for kind, value in (
        ("prompt", usage.prompt_tokens),
        ("completion", usage.completion_tokens),
        ("cached", usage.cached_tokens),
    ):
        if value:
            TOKENS.labels(model=model, type=kind).inc(value)
