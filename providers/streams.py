"""A reply as it arrives: the deltas of a stream and the open stream that yields them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from providers.failures import ProviderError
from providers.values import ProviderReply, Usage

logger = logging.getLogger("providers")


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, as the provider sent it (never empty)."""

    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of tool call number ``index`` (0-based, in the order the calls open). ``id`` and ``name``
    come with the call's first piece only (None afterwards); ``arguments`` is the next fragment of its
    JSON text, to be concatenated by ``index``."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of thinking block number ``index`` (0-based, in order): its next ``thinking`` text,
    or its ``signature`` (which closes it), or a redacted block's opaque ``data`` whole."""

    index: int
    thinking: str = ""
    signature: str | None = None
    data: str | None = None


@dataclass(frozen=True)
class UsageDelta:
    """The call's usage, once the provider reported it (before :class:`StreamFinish`)."""

    usage: Usage


@dataclass(frozen=True)
class StreamFinish:
    """The last delta of a stream that ended as it should: the whole reply, exactly what
    :meth:`ProviderAdapter.complete` returns for the same call (tool-call arguments normalised as
    there)."""

    reply: ProviderReply


StreamDelta = TextDelta | ToolCallDelta | ThinkingDelta | UsageDelta | StreamFinish


_Deltas = TypeVar("_Deltas")
_Close = TypeVar("_Close")


class _OpenStream(Generic[_Deltas, _Close]):
    """What both kinds of stream hold: the provider's deltas, how to release the connection, and how to
    turn any other failure into a :class:`ProviderError`."""

    def __init__(
        self, deltas: _Deltas, *, close: _Close, classify: Callable[[Exception], ProviderError]
    ) -> None:
        self._deltas = deltas
        self._close = close
        self._classify = classify
        self.closed = False


class ProviderStream(_OpenStream[Iterator[StreamDelta], Callable[[], None]], Iterator[StreamDelta]):
    """An open stream: the request was sent and the provider answered with a success status, the body
    is still arriving. Iterating yields :class:`StreamDelta` values and ends right after one
    :class:`StreamFinish`; a stream cut short (no finish from the provider) raises
    :class:`ProviderError` (``connection``), never ends quietly. Only :class:`ProviderError` escapes.
    Closing (also on leaving a ``with`` block, or after an error) releases the connection; idempotent.
    """

    def __next__(self) -> StreamDelta:
        if self.closed:
            raise StopIteration
        try:
            return next(self._deltas)
        except StopIteration:
            self.close()
            raise
        except ProviderError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise self._classify(exc) from None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self._close()
            except Exception as exc:  # releasing a socket must not mask the stream's own outcome
                logger.warning("closing a provider stream failed: %s", type(exc).__name__)

    def __enter__(self) -> ProviderStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def reply_of(stream: Iterator[StreamDelta]) -> ProviderReply:
    """The whole reply of ``stream`` (read to its end). Raises :class:`ProviderError`."""
    for delta in stream:
        if isinstance(delta, StreamFinish):
            return delta.reply
    raise TypeError("a provider stream ended without its finish")  # ProviderStream never does


def deltas_of(reply: ProviderReply) -> Iterator[StreamDelta]:
    """A whole reply as the deltas a stream of it would carry: the text, each tool call, usage, finish."""
    if reply.text:
        yield TextDelta(reply.text)
    for index, tool_call in enumerate(reply.tool_calls):
        yield ToolCallDelta(index, tool_call.id, tool_call.name, tool_call.arguments)
    yield UsageDelta(reply.usage)
    yield StreamFinish(reply)


class AsyncProviderStream(
    _OpenStream[AsyncIterator[StreamDelta], Callable[[], Awaitable[None]]], AsyncIterator[StreamDelta]
):
    """:class:`ProviderStream` read on an event loop (``async for``), with the same guarantees: it ends
    right after one :class:`StreamFinish`, a stream cut short raises :class:`ProviderError`, only
    :class:`ProviderError` escapes, and closing (:meth:`aclose`, also after an error) releases the
    connection."""

    async def __anext__(self) -> StreamDelta:
        if self.closed:
            raise StopAsyncIteration
        try:
            return await anext(self._deltas)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except ProviderError:
            await self.aclose()
            raise
        except Exception as exc:
            await self.aclose()
            raise self._classify(exc) from None

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                await self._close()
            except Exception as exc:  # releasing a socket must not mask the stream's own outcome
                logger.warning("closing a provider stream failed: %s", type(exc).__name__)


def threaded_stream(open_stream: Callable[[], ProviderStream]) -> AsyncProviderStream:
    """A blocking :class:`ProviderStream` read on an event loop: opening it and each of its deltas run
    in a worker thread (for adapters without an async client, such as the offline ``local`` one)."""
    opened: list[ProviderStream] = []

    async def deltas() -> AsyncIterator[StreamDelta]:
        stream = await asyncio.to_thread(open_stream)
        opened.append(stream)
        while (delta := await asyncio.to_thread(next, stream, None)) is not None:
            yield delta

    async def close() -> None:
        if opened:
            await asyncio.to_thread(opened[0].close)

    return AsyncProviderStream(deltas(), close=close, classify=_unclassified)


def _unclassified(exc: Exception) -> ProviderError:
    raise exc  # a ProviderStream raises ProviderError only; anything else is a bug to surface
