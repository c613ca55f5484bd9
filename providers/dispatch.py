"""Sending a call with bounded retries and fallbacks.

Policy (fallbacks: docs/decisions/0001-fallbacks-are-models.md):

* each target (provider config, model id) is tried up to ``1 + config.max_retries`` times;
* only retryable failures (connection, timeout, rate_limit, server_error) are retried; the wait before
  retry ``n`` (0-based) is ``min(8, 0.5 * 2**n)`` seconds, or the provider's ``retry-after`` when that
  is longer (capped at 30 s). No jitter: waits are reproducible in tests and logs;
* a non-retryable failure (auth, configuration, client_error, context_overflow, malformed, unknown)
  stops everything at once: walking fallbacks cannot fix a bad request or a bad key;
* when one target's retries are exhausted with a retryable failure the next target is tried, without
  waiting (it is another provider or model);
* a target the send cannot be fitted to (its window cannot hold the context's floor) is skipped, never
  sent: ``prepare`` raises :class:`TargetSkipped` for it, and the skip is an attempt with its reason;
* when everything fails the last :class:`ProviderError` is raised, its ``extra["attempts"]`` listing
  every attempt (indices, provider identifiers, model ids, classes, skip reasons; never content).

Every body goes through the send's guard pass (:class:`~providers.guard.WireGuard`), once per
target, right before its first attempt: this is the one place every adapter's request passes.

Streams (:func:`stream_with_fallbacks`) follow the same policy **until the first delta**: an attempt
opens the stream and reads its first delta, and a failure up to there (an error status, a refused
connection, a stream that ends before it says anything) is retried and walks the fallbacks exactly
as above. Once a delta has arrived it has been handed on to the caller, who may have forwarded it to
its own client; so from then on the target is committed: a failure later in the stream raises
:class:`ProviderError` to the caller and nothing is retried or sent elsewhere.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Generic, NamedTuple, TypeVar, cast

from config.database import connections_release
from context_assembly.profiles import ModelCapabilities
from providers.adapters import ADAPTER_POOL
from providers.attempts import opened, sent
from providers.base import ProviderAdapter
from providers.failures import FailureClass, ProviderError
from providers.guard import WireGuard
from providers.streams import ProviderStream
from providers.values import ProviderCall, ProviderConfig, ProviderReply

logger = logging.getLogger("providers")

BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
RETRY_AFTER_CAP_SECONDS = 30.0


class Target(NamedTuple):
    """Where a call may go: a provider, the model id there, and what that model's API accepts
    (None: the call's own capabilities; a plain ``(config, model_id)`` pair means the same)."""

    config: ProviderConfig
    model_id: str
    capabilities: ModelCapabilities | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try of one target. ``failure_class`` is None for the attempt that succeeded and for a
    target that was skipped (``skipped`` then names why: nothing was sent to it)."""

    target_index: int
    provider: str
    model_id: str
    failure_class: FailureClass | None
    retry_after: float | None = None
    status: int | None = None
    skipped: str = ""


class TargetSkipped(Exception):
    """Raised by a ``prepare`` hook for a target that must not receive this call. ``reason`` is a
    stable word (``context_overflow``); ``detail`` holds figures only, never content."""

    def __init__(self, reason: str, detail: dict[str, int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = dict(detail or {})


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """The call one target is sent and the guard that checks its body (None: unchecked)."""

    call: ProviderCall
    guard: WireGuard | None


# Given a target's index, its own call and guard, or TargetSkipped.
Prepare = Callable[[int], PreparedCall]


Answer = TypeVar("Answer")


@dataclass(frozen=True, slots=True)
class Dispatched(Generic[Answer]):
    """What a walk of the targets ended with, whichever driver walked it: the ``answer`` of the first
    target that gave one (a whole :class:`ProviderReply`, or a stream open from its first delta,
    :class:`~providers.streams.ProviderStream` or, on an event loop,
    :class:`~providers.streams.AsyncProviderStream`), that target's index, and the attempts up
    to it. A stream's deltas start with the first (already received) and end with its
    :class:`~providers.streams.StreamFinish`; a failure later in it raises
    :class:`ProviderError` (no retry, no fallback). Close it when not read to the end."""

    answer: Answer
    served_index: int
    attempts: tuple[Attempt, ...]


Outcome = TypeVar("Outcome")
# One attempt on one target: the adapter, the call and the body it sends; raises ProviderError.
Perform = Callable[[ProviderAdapter, ProviderCall, dict[str, Any]], Outcome]


def backoff_seconds(retry: int, retry_after: float | None) -> float:
    """The wait before retry number ``retry`` (0-based) of one target."""
    delay = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**retry)
    if retry_after is not None:
        delay = max(delay, min(retry_after, RETRY_AFTER_CAP_SECONDS))
    return delay


def complete_with_fallbacks(
    targets: Sequence[Target],
    call: ProviderCall,
    *,
    guard: WireGuard | None = None,
    sleep: Callable[[float], None] = time.sleep,
    prepare: Prepare | None = None,
) -> Dispatched[ProviderReply]:
    """Send ``call`` to the first target that answers (see the module docstring for the policy).

    ``call.model_id`` and ``call.capabilities`` are replaced by each target's. ``guard`` checks each
    target's body before it is sent (the runtime always passes one; without it bodies go out
    unchecked). ``prepare``, when given, is asked for each target's own call and guard right before
    the target is tried (the runtime fits the context to each target's window there) and replaces
    ``call`` and ``guard``; it may skip the target (:class:`TargetSkipped`). Raises
    :class:`ProviderError` (``context_overflow`` when every target was skipped), or the guard's
    ``LateRedactionOverflow`` (then nothing was sent to that target).
    """
    attempts: list[Attempt] = []
    reply, index = _first_success(targets, call, attempts, guard, sleep, prepare, sent)
    return Dispatched(reply, index, tuple(attempts))


def stream_with_fallbacks(
    targets: Sequence[Target],
    call: ProviderCall,
    *,
    guard: WireGuard | None = None,
    sleep: Callable[[float], None] = time.sleep,
    prepare: Prepare | None = None,
) -> Dispatched[ProviderStream]:
    """:func:`complete_with_fallbacks` with each target's call sent as a stream: the stream of the
    first target whose stream yields a first delta. Retries and fallbacks apply up to that delta only
    (see the module docstring). Raises :class:`ProviderError` (every attempt listed) or the guard's
    ``LateRedactionOverflow``."""
    attempts: list[Attempt] = []
    stream, index = _first_success(targets, call, attempts, guard, sleep, prepare, opened)
    return Dispatched(stream, index, tuple(attempts))


@dataclass(frozen=True, slots=True)
class PrepareStep:
    """A step of the walk (:func:`walk`): the call and body of target ``index``, to be run by the
    driver where the database may be read (the runtime's ``prepare`` fits and records there)."""

    index: int
    config: ProviderConfig
    model_id: str
    capabilities: ModelCapabilities | None
    call: ProviderCall
    guard: WireGuard | None
    prepare: Prepare | None
    streaming: bool


@dataclass(frozen=True, slots=True)
class WaitStep:
    """A step of the walk: wait ``seconds`` before the next attempt on ``provider`` (a backoff)."""

    seconds: float
    provider: str


@dataclass(frozen=True, slots=True)
class SendStep:
    """A step of the walk: one attempt, ``body`` sent once to ``adapter`` (its outcome or its
    :class:`ProviderError` goes back into the walk)."""

    adapter: ProviderAdapter
    call: ProviderCall
    body: dict[str, Any]


Step = PrepareStep | WaitStep | SendStep
# The policy of the module docstring as a generator: it yields the steps a driver performs and is sent
# their outcomes (or thrown their ProviderError or TargetSkipped); it returns the first success and its
# target's index, or raises the last ProviderError with every attempt. The blocking driver
# (_first_success) and the event loop's (providers/async_dispatch.py) share it.
Walk = Generator[Step, Any, tuple[Any, int]]


def walk(
    targets: Sequence[Target],
    call: ProviderCall,
    attempts: list[Attempt],
    guard: WireGuard | None,
    prepare: Prepare | None,
    *,
    streaming: bool,
) -> Walk:
    """The walk over ``targets`` (see the module docstring); appends every attempt to ``attempts``."""
    if not targets:
        raise ProviderError(
            "no provider to send the call to",
            failure_class=FailureClass.CONFIGURATION,
            provider="",
        )
    error: ProviderError | None = None
    for index, target in enumerate(targets):
        config, model_id, capabilities = Target(*target)
        step = PrepareStep(index, config, model_id, capabilities, call, guard, prepare, streaming)
        try:
            adapter, target_call, body = yield step
        except TargetSkipped as skip:
            attempts.append(Attempt(index, config.identifier, model_id, None, skipped=skip.reason))
            logger.warning("target %s/%s skipped: %s", config.identifier, model_id, skip.reason)
            continue
        except ProviderError as exc:
            attempts.append(_failed(index, config, model_id, exc))
            error = exc
        else:
            outcome = yield from _attempts(index, config, adapter, target_call, body, attempts)
            if not isinstance(outcome, ProviderError):
                return outcome, index
            error = outcome
        if not error.retryable:
            break
        logger.warning("provider %s exhausted its retries; trying the next target", config.identifier)
    if error is None:  # every target was skipped: nothing was sent
        error = ProviderError(
            "no target can hold the context",
            failure_class=FailureClass.CONTEXT_OVERFLOW,
            provider=Target(*targets[0]).config.identifier,
        )
    raise _with_attempts(error, attempts)


def _attempts(
    index: int,
    config: ProviderConfig,
    adapter: ProviderAdapter,
    call: ProviderCall,
    body: dict[str, Any],
    attempts: list[Attempt],
) -> Generator[Step, Any, Any]:
    """The attempts on one target: its outcome, or its last error."""
    errors: list[ProviderError] = []
    for retry in range(1 + config.max_retries):
        if errors:
            yield WaitStep(backoff_seconds(retry - 1, errors[-1].retry_after), config.identifier)
        try:
            result = yield SendStep(adapter, call, body)
        except ProviderError as exc:
            attempts.append(_failed(index, config, call.model_id, exc))
            errors.append(exc)
            if not exc.retryable:
                break
            continue
        attempts.append(Attempt(index, config.identifier, call.model_id, None))
        return result
    return errors[-1]


def prepared(step: PrepareStep) -> tuple[ProviderAdapter, ProviderCall, dict[str, Any]]:
    """What a :class:`PrepareStep` stands for: the target's adapter, call and body (through its guard
    pass). Raises :class:`TargetSkipped`, :class:`ProviderError` or the guard's
    ``LateRedactionOverflow``."""
    target_call, target_guard = step.call, step.guard
    if step.prepare is not None:
        target = step.prepare(step.index)
        target_call, target_guard = target.call, target.guard
    target_call = _call_for(target_call, step.model_id, step.capabilities or target_call.capabilities)
    if step.streaming and not target_call.stream:
        target_call = replace(target_call, stream=True)
    adapter = ADAPTER_POOL.get(step.config)
    if target_guard is not None:
        target_call, body = target_guard.prepare(adapter, target_call, target_index=step.index)
    else:
        body = adapter.request_body(target_call)
    return adapter, target_call, body


def _first_success(
    targets: Sequence[Target],
    call: ProviderCall,
    attempts: list[Attempt],
    guard: WireGuard | None,
    sleep: Callable[[float], None],
    prepare: Prepare | None,
    perform: Perform[Outcome],
) -> tuple[Outcome, int]:
    """``perform``'s result on the first target where it succeeds, and that target's index: the walk
    driven in this thread. Nothing of the database is needed until the reply is back: the thread's
    connection goes back to the pool for each wait (config/database.py)."""
    steps = walk(targets, call, attempts, guard, prepare, streaming=perform is opened)
    sent: Any = None
    error: Exception | None = None
    while True:
        try:
            step = steps.throw(error) if error is not None else steps.send(sent)
        except StopIteration as stop:
            return cast(tuple[Outcome, int], stop.value)
        sent, error = None, None
        try:
            if isinstance(step, PrepareStep):
                sent = prepared(step)
                continue
            if isinstance(step, WaitStep):
                connections_release(waiting_for=f"provider {step.provider!r}")
                sleep(step.seconds)
            else:
                connections_release(waiting_for=f"provider {step.adapter.config.identifier!r}")
                sent = perform(step.adapter, step.call, step.body)
        except (ProviderError, TargetSkipped) as exc:
            error = exc


def _call_for(call: ProviderCall, model_id: str, capabilities: ModelCapabilities) -> ProviderCall:
    if call.model_id == model_id and call.capabilities == capabilities:
        return call
    return replace(call, model_id=model_id, capabilities=capabilities)


def _failed(index: int, config: ProviderConfig, model_id: str, error: ProviderError) -> Attempt:
    return Attempt(index, config.identifier, model_id, error.failure_class, error.retry_after, error.status)


def _with_attempts(error: ProviderError, attempts: list[Attempt]) -> ProviderError:
    error.attempts = tuple(attempts)
    error.extra = {**error.extra, "attempts": [_attempt_dict(attempt) for attempt in attempts]}
    return error


def _attempt_dict(attempt: Attempt) -> dict[str, object]:
    data = asdict(attempt)
    data["failure_class"] = attempt.failure_class.value if attempt.failure_class else None
    if not attempt.skipped:
        del data["skipped"]  # listed only for a skipped target
    return data
