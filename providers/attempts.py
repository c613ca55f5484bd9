"""One attempt at a provider, made and observed: a whole reply sent, or a stream opened up to its first
delta, through an adapter's blocking client (:func:`sent`, :func:`opened`: the blocking driver,
providers/dispatch.py) or its async one (:func:`sent_async`, :func:`opened_async`: the event-loop
driver, providers/async_dispatch.py). Each attempt is traced, counted and timed to its end
(agents/telemetry.py) the same way whichever client made it.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from types import TracebackType
from typing import Any

from providers.base import ProviderAdapter
from providers.failures import FailureClass, ProviderError
from providers.streams import AsyncProviderStream, ProviderStream, StreamDelta, StreamFinish
from providers.telemetry import StreamObserved, provider_call_observed
from providers.values import ProviderCall, ProviderReply


def sent(adapter: ProviderAdapter, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
    """One whole attempt through the adapter's blocking client, observed."""
    config = adapter.config
    return provider_call_observed(
        lambda: adapter.send(call, body), provider=config.identifier, kind=config.kind, model=call.model_id
    )


def opened(adapter: ProviderAdapter, call: ProviderCall, body: dict[str, Any]) -> ProviderStream:
    """A new stream once its first delta has arrived, read from that delta on (traced, counted and
    timed to its end: ``agents/telemetry.py``); a stream that fails before its first delta is
    closed."""
    config = adapter.config
    observed = StreamObserved(provider=config.identifier, kind=config.kind, model=call.model_id)
    try:
        stream = adapter.stream(call, body)
        first = next(stream)
    except ProviderError as error:
        observed.failed(error)
        raise
    except StopIteration:  # unreachable: a provider stream ends with a finish or raises
        stream.close()
        raise adapter.error(FailureClass.MALFORMED, "the stream ended before its first delta") from None
    deltas = _observed(itertools.chain((first,), stream), observed)

    def close() -> None:
        # Closed here, not left to the garbage collector: a generator finalised during a collection
        # would count its close from inside whatever code the collection interrupted (the metrics'
        # own lock included).
        try:
            deltas.close()  # counted as closed when the reader went away before the end
        finally:
            stream.close()

    # Started, so that a close before the end is observed as one; then read from the first delta.
    started = next(deltas)
    return ProviderStream(itertools.chain((started,), deltas), close=close, classify=adapter.classify)


def _observed(deltas: Iterator[StreamDelta], observed: StreamObserved) -> Generator[StreamDelta, None, None]:
    with ObservedReading(observed) as reading:
        for delta in deltas:
            yield reading.read(delta)


class ObservedReading:
    """The reading of one attempt's stream (by either driver), ``with`` around the loop and each delta
    passed through :meth:`read`: the stream's finish ends the observed attempt as finished, a
    provider's error as failed, a close before the end (``GeneratorExit``: the reader went away) as
    closed; a close after the finish ends nothing more. The error propagates."""

    __slots__ = ("finished", "observed")

    def __init__(self, observed: StreamObserved) -> None:
        self.observed = observed
        self.finished = False

    def __enter__(self) -> ObservedReading:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if isinstance(error, ProviderError):
            self.observed.failed(error)
        elif isinstance(error, GeneratorExit) and not self.finished:
            self.observed.closed()

    def read(self, delta: StreamDelta) -> StreamDelta:
        if isinstance(delta, StreamFinish):
            self.finished = True
            self.observed.finished(delta.reply)
        return delta


async def sent_async(adapter: ProviderAdapter, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
    """One whole attempt through the adapter's async client, observed as the blocking driver's
    (:func:`sent`)."""
    config = adapter.config
    observed = StreamObserved(provider=config.identifier, kind=config.kind, model=call.model_id)
    try:
        reply = await adapter.asend(call, body)
    except ProviderError as error:
        observed.failed(error)
        raise
    except BaseException:  # cancelled: the client went away
        observed.closed()
        raise
    observed.finished(reply)
    return reply


async def opened_async(
    adapter: ProviderAdapter, call: ProviderCall, body: dict[str, Any]
) -> AsyncProviderStream:
    """A new stream once its first delta has arrived, read from that delta on, observed as the
    blocking driver's (:func:`opened`); a stream that fails before its first delta is closed."""
    config = adapter.config
    observed = StreamObserved(provider=config.identifier, kind=config.kind, model=call.model_id)
    stream: AsyncProviderStream | None = None
    try:
        stream = await adapter.astream(call, body)
        first = await anext(stream)
    except ProviderError as error:
        observed.failed(error)
        raise
    except StopAsyncIteration:  # unreachable: a provider stream ends with a finish or raises
        await stream.aclose()  # type: ignore[union-attr]  # set: the stream ended, so it was opened
        raise adapter.error(FailureClass.MALFORMED, "the stream ended before its first delta") from None
    except BaseException:  # cancelled: the client went away before the first delta
        if stream is not None:
            await stream.aclose()
        observed.closed()
        raise
    deltas = _observed_async(first, stream, observed)

    async def close() -> None:
        try:
            await deltas.aclose()  # counted as closed when the reader went away before the end
        finally:
            await stream.aclose()

    # Started, so that a close before the end is observed as one; then read from the first delta.
    started = await anext(deltas)
    return AsyncProviderStream(prepended(started, deltas), close=close, classify=adapter.classify)


async def _observed_async(
    first: StreamDelta, stream: AsyncProviderStream, observed: StreamObserved
) -> AsyncGenerator[StreamDelta, None]:
    with ObservedReading(observed) as reading:
        async for delta in prepended(first, stream):
            yield reading.read(delta)


async def prepended(first: StreamDelta, rest: AsyncIterator[StreamDelta]) -> AsyncIterator[StreamDelta]:
    yield first
    async for delta in rest:
        yield delta
