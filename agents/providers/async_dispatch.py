"""A call sent with retries and fallbacks whose wait runs on an event loop (the ASGI server's).

The policy is :func:`agents.providers.dispatch.walk`'s, unchanged: this module is its second driver.
:class:`StreamStart` (:class:`SendStart` for a whole reply) drives the walk in the calling thread up
to the first attempt (the first target's fit, skip and guard pass, which read the database), and
holds the attempt still to make; :meth:`StreamStart.open` (:meth:`SendStart.send`) makes it on the
event loop through the SDK's async client, and the retries,
backoffs and fallbacks after it (a later target's preparation runs in the request's thread again,
through ``sync_to_async``). A stream it returns is read on the loop too, so a request waiting on
its provider holds no thread (docs/decisions/0011-streaming.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from asgiref.sync import sync_to_async

from agents.providers.attempts import opened_async, prepended, sent_async
from agents.providers.base import ProviderAdapter
from agents.providers.dispatch import (
    Attempt,
    DispatchResult,
    Prepare,
    PrepareStep,
    SendStep,
    Step,
    Target,
    TargetSkipped,
    prepared,
    walk,
)
from agents.providers.failures import ProviderError
from agents.providers.guard import WireGuard
from agents.providers.streams import AsyncProviderStream, StreamDelta
from agents.providers.values import ProviderCall

logger = logging.getLogger("agents.providers")


@dataclass
class AsyncStreamDispatch:
    """:class:`~agents.providers.dispatch.StreamDispatch` read on an event loop: ``deltas`` yields every
    delta of the serving target from the first on; :meth:`aclose` releases the connection."""

    deltas: AsyncIterator[StreamDelta]
    served_index: int
    attempts: tuple[Attempt, ...]
    stream: AsyncProviderStream

    async def aclose(self) -> None:
        await self.stream.aclose()


class _Start:
    """A call prepared up to its first attempt (see the module docstring): constructing it drives the
    walk in this thread up to there, and raises what
    :func:`~agents.providers.dispatch.complete_with_fallbacks` raises before anything is sent (every
    target skipped, a bad configuration, the guard's ``LateRedactionOverflow``)."""

    streaming: ClassVar[bool]

    def __init__(
        self,
        targets: Sequence[Target],
        call: ProviderCall,
        *,
        guard: WireGuard | None = None,
        prepare: Prepare | None = None,
    ) -> None:
        self._attempts: list[Attempt] = []
        self._steps = walk(targets, call, self._attempts, guard, prepare, streaming=self.streaming)
        sent: Any = None
        error: Exception | None = None
        index = -1
        while True:
            step = self._steps.throw(error) if error is not None else self._steps.send(sent)
            sent, error = None, None
            if isinstance(step, SendStep):
                break
            assert isinstance(step, PrepareStep)  # a wait comes only after an attempt
            index = step.index
            try:
                sent = prepared(step)
            except (ProviderError, TargetSkipped) as exc:
                error = exc
        self._next: Step = step
        self.served_index = index  # the first attempt's target (a fallback may serve instead)

    async def _walked(
        self, perform: Callable[[ProviderAdapter, ProviderCall, dict[str, Any]], Awaitable[Any]]
    ) -> Any:
        """The rest of the walk driven on the loop, each attempt made by ``perform``: what the first
        target where it succeeds returned, and that target's index. Raises :class:`ProviderError`
        (every attempt listed) or the guard's ``LateRedactionOverflow``."""
        steps, step = self._steps, self._next
        sent: Any = None
        error: Exception | None = None
        while True:
            try:
                if isinstance(step, PrepareStep):
                    sent = await sync_to_async(prepared, thread_sensitive=True)(step)
                elif isinstance(step, SendStep):
                    sent = await perform(step.adapter, step.call, step.body)
                else:
                    await asyncio.sleep(step.seconds)
            except (ProviderError, TargetSkipped) as exc:
                error = exc
            try:
                step = steps.throw(error) if error is not None else steps.send(sent)
            except StopIteration as stop:
                return stop.value
            sent, error = None, None


class StreamStart(_Start):
    """:func:`~agents.providers.dispatch.stream_with_fallbacks` prepared up to its first attempt."""

    streaming = True

    async def open(self) -> AsyncStreamDispatch:
        """The stream of the first target whose stream yields a first delta (the walk's policy)."""
        (first, stream), index = await self._walked(opened_async)
        return AsyncStreamDispatch(
            deltas=prepended(first, stream),
            served_index=index,
            attempts=tuple(self._attempts),
            stream=stream,
        )


class SendStart(_Start):
    """:func:`~agents.providers.dispatch.complete_with_fallbacks` prepared up to its first attempt."""

    streaming = False

    async def send(self) -> DispatchResult:
        """The reply of the first target that answers (the walk's policy)."""
        reply, index = await self._walked(sent_async)
        return DispatchResult(reply=reply, served_index=index, attempts=tuple(self._attempts))
