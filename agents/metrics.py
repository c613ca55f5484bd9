"""The runtime's Prometheus series, and the one-line recorders the runtime calls where events happen.

Served by ``/metrics`` (``config/metrics.py``, which also explains the multiprocess mode). Every label
value is an identifier or a vocabulary value: provider identifiers and model ids from the catalogue,
step actions, termination reasons, failure classes, token types. Never content.

| series | labels | recorded by |
|---|---|---|
| ``govctx_steps_total`` | ``status`` (advanced, finished, skipped), ``termination_reason`` (when finished) | the step task |
| ``govctx_provider_calls_total`` | ``provider``, ``model``, ``outcome`` (``ok``, the failure class, or ``closed`` for a stream its reader left) | the dispatcher, per attempt (through ``agents/telemetry.py``) |
| ``govctx_provider_call_duration_seconds`` | the same (histogram) | the dispatcher, per attempt |
| ``govctx_tokens_total`` | ``model``, ``type`` (prompt, completion, cached) | the dispatcher, provider-reported usage; ``agents/runtime/budget.py``, what an abandoned send or a broken stream was charged |
| ``govctx_abandoned_sends_total`` | ``model``, ``charged`` (provider_reported, estimated) | ``agents/runtime/budget.py``, a send its reader left before the finish |
| ``govctx_broken_streams_total`` | ``model``, ``charged`` (provider_reported, estimated) | ``agents/runtime/budget.py``, a stream its provider broke after the first delta |
| ``govctx_run_requeues_total`` | ``action`` (requeued, failed), ``cause`` (lease_expired, lost) | the reaper |
| ``govctx_budget_refusals_total`` | ``kind`` (tokens, cost: the client's daily limit that did not fit) | ``agents/runtime/budget.py`` |

Governance decisions and redactions are counted in ``governance/telemetry.py``; the gauges read at
scrape time (runs in flight, runs waiting) in ``agents/health.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from prometheus_client import Counter, Histogram

# This module imports no other module of the app: the runtime and the provider dispatcher both call
# it, so it must sit below them (hence the small protocols instead of their types).


class _Usage(Protocol):
    @property
    def prompt_tokens(self) -> int | None: ...
    @property
    def cached_tokens(self) -> int | None: ...
    @property
    def completion_tokens(self) -> int | None: ...


class _Reply(Protocol):
    @property
    def usage(self) -> _Usage: ...
    @property
    def finish_reason(self) -> str: ...


Reply = TypeVar("Reply", bound=_Reply)

# The GenAI semantic conventions' buckets for a client operation's duration: 10 ms to 82 s, doubling.
DURATION_BUCKETS = tuple(0.01 * 2**n for n in range(14))

STEPS = Counter(
    "govctx_steps_total", "Step task executions by how they ended.", ["status", "termination_reason"]
)
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
REQUEUES = Counter(
    "govctx_run_requeues_total",
    "Runs the reaper requeued or ended, by why: an expired lease, or a step message lost.",
    ["action", "cause"],
)

ABANDONED_SENDS = Counter(
    "govctx_abandoned_sends_total",
    "Sends whose reader went away before their finish, charged what the provider reported or an "
    "estimate (charged: provider_reported, estimated).",
    ["model", "charged"],
)

BROKEN_STREAMS = Counter(
    "govctx_broken_streams_total",
    "Streams their provider broke after the first delta, charged what the provider reported or an "
    "estimate of the prompt and what had streamed (charged: provider_reported, estimated).",
    ["model", "charged"],
)

BUDGET_REFUSALS = Counter(
    "govctx_budget_refusals_total",
    "Sends refused because they did not fit their client's daily budget, by the limit (tokens, cost).",
    ["kind"],
)


# Series whose label values are all known start at zero, so that a rate over them exists at once.
for _status in ("advanced", "skipped"):
    STEPS.labels(status=_status, termination_reason="")
for _action in ("requeued", "failed"):
    for _cause in ("lease_expired", "lost"):
        REQUEUES.labels(action=_action, cause=_cause)
for _kind in ("tokens", "cost"):
    BUDGET_REFUSALS.labels(kind=_kind)


def step_counted(*, action: str, reason: str) -> None:
    """A step task's outcome: its action, and for ``finished`` the run's termination reason."""
    STEPS.labels(status=action, termination_reason=reason if action == "finished" else "").inc()


def failure_class(error: BaseException) -> str:
    """A ``ProviderError``'s failure class (``timeout``, ``rate_limit``, …); ``unknown`` otherwise."""
    return str(getattr(error, "failure_class", "") or "unknown")


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
    _tokens(model, reply.usage)
    return reply


def provider_stream_ended(
    *,
    provider: str,
    model: str,
    started: float,
    error: BaseException | None = None,
    usage: _Usage | None = None,
    outcome: str = "ok",
) -> None:
    """One attempt of a streamed provider call, counted and timed as :func:`provider_call_timed`
    counts a whole one: from ``started`` (``time.perf_counter()`` before the request) to the stream's
    end, or to the ``error`` that ended it (``outcome`` names an end without error: ``ok``, or
    ``closed`` when its reader went away); the reply's tokens counted when the stream finished."""
    _provider_call(provider, model, failure_class(error) if error is not None else outcome, started)
    if usage is not None:
        _tokens(model, usage)


def _provider_call(provider: str, model: str, outcome: str, started: float) -> None:
    PROVIDER_CALLS.labels(provider=provider, model=model, outcome=outcome).inc()
    PROVIDER_CALL_SECONDS.labels(provider=provider, model=model, outcome=outcome).observe(
        time.perf_counter() - started
    )


def _tokens(model: str, usage: _Usage) -> None:
    for kind, value in (
        ("prompt", usage.prompt_tokens),
        ("completion", usage.completion_tokens),
        ("cached", usage.cached_tokens),
    ):
        if value:
            TOKENS.labels(model=model, type=kind).inc(value)


def abandoned_send_counted(*, model: str, usage: _Usage, charged: str) -> None:
    """One send its reader abandoned (a stream closed or cancelled before its finish), its charged
    tokens counted in ``govctx_tokens_total`` as a finished call's are, and how they were known."""
    ABANDONED_SENDS.labels(model=model, charged=charged).inc()
    _tokens(model, usage)


def broken_stream_counted(*, model: str, usage: _Usage, charged: str) -> None:
    """One stream its provider broke after the first delta (the prompt was processed, part of the
    reply sent), its charged tokens counted in ``govctx_tokens_total`` as a finished call's are, and
    how they were known."""
    BROKEN_STREAMS.labels(model=model, charged=charged).inc()
    _tokens(model, usage)


def reap_counted(*, action: str, cause: str) -> None:
    """One run the reaper requeued (``action="requeued"``) or ended (``"failed"``), and why."""
    REQUEUES.labels(action=action, cause=cause).inc()


def budget_refusal_counted(*, kind: str) -> None:
    """One send refused for its client's daily budget; ``kind`` names the limit (tokens, cost)."""
    BUDGET_REFUSALS.labels(kind=kind).inc()
