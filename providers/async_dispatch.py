"""A call sent with retries and fallbacks whose wait runs on an event loop (the ASGI server's).

The policy is :func:`providers.dispatch.walk`'s, unchanged: this module is its second driver.
:class:`LoopAttempts` drives the walk in the calling thread up to the first attempt (the first
target's fit, skip and guard pass, which read the database), and holds the attempt still to make;
:meth:`LoopAttempts.open` (:meth:`LoopAttempts.send` for a whole reply) makes it on the event loop through the SDK's async client, and the retries,
backoffs and fallbacks after it (a later target's preparation runs in the request's thread again,
through ``sync_to_async``). A stream it returns is read on the loop too, so a request waiting on
its provider holds no thread (docs/decisions/0011-streaming.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from asgiref.sync import sync_to_async

from providers.attempts import opened_async, sent_async
from providers.base import ProviderAdapter
from providers.dispatch import (
    Attempt,
    Dispatched,
    Prepare,
    PrepareStep,
    SendStep,
    Step,
    Target,
    TargetSkipped,
    prepared,
    walk,
)
from providers.failures import ProviderError
from providers.guard import WireGuard
from providers.streams import AsyncProviderStream
from providers.values import ProviderCall, ProviderReply

logger = logging.getLogger("providers")


class LoopAttempts:
    """A call prepared up to its first attempt, to be made on the event loop (see the module
    docstring): constructing it drives the walk in this thread up to there, and raises what
    :func:`~providers.dispatch.complete_with_fallbacks` raises before anything is sent (every
    target skipped, a bad configuration, the guard's ``LateRedactionOverflow``). ``streaming``: the
    attempts open streams (:meth:`open`), else they send whole (:meth:`send`)."""

    __slots__ = ("_attempts", "_next", "_steps", "streaming")

    def __init__(
        self,
        targets: Sequence[Target],
        call: ProviderCall,
        *,
        guard: WireGuard | None = None,
        prepare: Prepare | None = None,
        streaming: bool,
    ) -> None:
        self.streaming = streaming
        self._attempts: list[Attempt] = []
        self._steps = walk(targets, call, self._attempts, guard, prepare, streaming=streaming)
        sent: Any = None
        error: Exception | None = None
        while True:
            step = self._steps.throw(error) if error is not None else self._steps.send(sent)
            sent, error = None, None
            if isinstance(step, SendStep):
                break
            assert isinstance(step, PrepareStep)  # a wait comes only after an attempt
            try:
                sent = prepared(step)
            except (ProviderError, TargetSkipped) as exc:
                error = exc
        self._next: Step = step

    async def open(self) -> Dispatched[AsyncProviderStream]:
        """The stream of the first target whose stream yields a first delta (the walk's policy)."""
        assert self.streaming
        stream, index = await self._walked(opened_async)
        return Dispatched(stream, index, tuple(self._attempts))

    async def send(self) -> Dispatched[ProviderReply]:
        """The reply of the first target that answers (the walk's policy)."""
        assert not self.streaming
        reply, index = await self._walked(sent_async)
        return Dispatched(reply, index, tuple(self._attempts))

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
