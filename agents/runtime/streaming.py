"""A governed stream: the deltas of a provider stream, redacted for whoever reads them as they arrive.

:meth:`agents.runtime.send.GovernedCall.stream` opens it after the same check, fit and guard pass as every
send; this module only reads the open stream. Text and each tool call's arguments pass through their
own :class:`~governance.guardrails.redaction.streaming.StreamRedactor`, so a secret split across
deltas never comes out (arguments are read as JSON text, so what comes out joins into valid JSON);
ids and names are redacted whole. Where the send pseudonymized personal data, what leaves the
redactors has its placeholders restored for the receiver (a placeholder split across deltas is held
back until it is whole: ``agents/runtime/pseudonyms.py``). At the provider's finish, what the
redactors still hold is handed on, then the call's outcome: :class:`~agents.runtime.outcome.Answered`
with the whole reply, redacted as a reply that did not stream is (its redaction events recorded then,
once). A provider stream that breaks after its first delta ends it with the call's
:class:`~agents.runtime.outcome.Ended` instead (nothing is retried once text went out).

The same stream is read either blocking (``for``, from :meth:`~agents.runtime.send.GovernedCall.stream`)
or on an event loop (``async for``, from :meth:`~agents.runtime.send.GovernedCall.astream`, where the
provider's deltas arrive through its async client): the redaction is the same code; on the loop the
two moments that write to the database (the finish, and the end of the budget reservation) run in
the request's thread (``sync_to_async``).

A delta is handed on only once it has left the redactor: a text delta may come out shorter than it
went in, later, or merged with the next one; nothing comes out empty.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from asgiref.sync import sync_to_async

from agents.runtime.outcome import Answered, Ended
from agents.runtime.pseudonyms import Pseudonyms, StreamRestorer
from governance.guardrails.redaction import redact
from governance.guardrails.redaction.streaming import StreamRedactor
from providers.failures import ProviderError
from providers.streams import (
    AsyncProviderStream,
    ProviderStream,
    StreamDelta,
    StreamFinish,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)
from providers.values import ProviderReply, Usage


@dataclass(frozen=True)
class StreamCut:
    """How a stream ended before its finish: ``by`` its ``reader``, who went away (closed, or
    cancelled), or by its ``provider``, whose stream broke after the first delta (a dropped
    connection, a malformed chunk, an error event). Either way the provider had the prompt: what it
    had sent of the reply by then (text and tool-call arguments as sent, before redaction) and its
    usage if it had reported it (None otherwise)."""

    streamed: str
    usage: Usage | None
    by: Literal["reader", "provider"]


# How a stream ended: its provider's reply (the finish was read), or cut before it.
StreamEnd = ProviderReply | StreamCut
# What a governed stream hands on: redacted deltas, then the call's outcome.
StreamPiece = TextDelta | ToolCallDelta | ThinkingDelta | UsageDelta | Answered | Ended


@dataclass
class _ThinkingFilter:
    """One thinking block's text on its way out: redacted as reply text is; its signature handed on
    only when nothing was taken out (the signed text is then what the caller got)."""

    redactor: StreamRedactor = field(default_factory=StreamRedactor)
    raw: list[str] = field(default_factory=list)
    out: list[str] = field(default_factory=list)
    closed: bool = False  # its signature was handed on (or withheld)


@dataclass
class _ToolCallFilter:
    redactor: StreamRedactor = field(default_factory=lambda: StreamRedactor(json_text=True))
    restorer: StreamRestorer | None = None
    opened: bool = False
    id: str | None = None
    name: str | None = None


class GovernedStream(Iterator[StreamPiece], AsyncIterator[StreamPiece]):
    """The redacted deltas of one open provider stream, ending with the call's outcome: its
    :class:`~agents.runtime.outcome.Answered` (the reply redacted whole) once the provider's finish is
    read, or its :class:`~agents.runtime.outcome.Ended` (a :class:`ProviderError`) when the provider's
    stream breaks after the first delta (nothing is retried once a delta has arrived). Close it when
    not read to the end; the reply's redaction events are recorded only when the finish is read.

    ``finish`` redacts the whole reply, records its events and answers the call; ``broken`` ends the
    call with the provider's error. ``ended`` is called exactly once: with the provider's reply when
    the finish is read, or with :class:`StreamCut` when the stream is closed or cancelled before, or
    the provider broke it (the send's budget reservation settles on it)."""

    def __init__(
        self,
        stream: ProviderStream | AsyncProviderStream,
        *,
        finish: Callable[[ProviderReply], Answered],
        broken: Callable[[ProviderError], Ended],
        ended: Callable[[StreamEnd], None] | None = None,
        pseudonyms: Pseudonyms | None = None,
    ) -> None:
        self._stream = stream
        self._finish = finish
        self._broken = broken
        self._ended = ended
        self._text = StreamRedactor()
        # Where the send pseudonymized: placeholders restored after redaction, split ones held back.
        self._pseudonyms = pseudonyms if pseudonyms is not None and pseudonyms.restoring else None
        self._restorer = StreamRestorer(self._pseudonyms) if self._pseudonyms is not None else None
        self._calls: dict[int, _ToolCallFilter] = {}
        self._thinking: dict[int, _ThinkingFilter] = {}
        self._pending: list[StreamPiece] = []
        self._over = False  # the outcome was handed on
        self._streamed: list[str] = []  # what the provider sent, before redaction
        self._usage: Usage | None = None

    def __next__(self) -> StreamPiece:
        assert isinstance(self._stream, ProviderStream)
        try:
            while not self._pending:
                if self._over:
                    raise StopIteration
                self._pending = self._redacted(next(self._stream))
        except ProviderError as error:
            self._end(self._cut("provider"))
            return self._outcome(self._broken(error))
        except BaseException as error:
            self._end(self._ended_by(error))
            raise
        return self._pending.pop(0)

    def __aiter__(self) -> GovernedStream:
        return self

    async def __anext__(self) -> StreamPiece:
        assert isinstance(self._stream, AsyncProviderStream)
        try:
            while not self._pending:
                if self._over:
                    raise StopAsyncIteration
                delta = await anext(self._stream)
                if isinstance(delta, StreamFinish):  # it writes to the database: in the request's thread
                    self._pending = await sync_to_async(self._finished, thread_sensitive=True)(delta)
                else:
                    self._pending = self._redacted(delta)
        except ProviderError as error:
            await self._aend(self._cut("provider"))
            return self._outcome(self._broken(error))
        except BaseException as error:
            await self._aend(self._ended_by(error))
            raise
        return self._pending.pop(0)

    def _outcome(self, outcome: Answered | Ended) -> Answered | Ended:
        self._over = True
        return outcome

    def close(self) -> None:
        assert isinstance(self._stream, ProviderStream)
        try:
            self._stream.close()
        finally:
            self._end(self._cut("reader"))

    async def aclose(self) -> None:
        assert isinstance(self._stream, AsyncProviderStream)
        try:
            await self._stream.aclose()
        finally:
            await self._aend(self._cut("reader"))

    async def _aend(self, end: StreamEnd) -> None:
        if self._ended is not None:
            await sync_to_async(self._end, thread_sensitive=True)(end)

    def _end(self, end: StreamEnd) -> None:
        ended, self._ended = self._ended, None
        if ended is not None:
            ended(end)

    def _ended_by(self, error: BaseException) -> StreamEnd:
        """Its deltas ending without a finish broke the stream; anything else (a cancellation, the
        reader's generator closed) means its reader went away."""
        if isinstance(error, StopIteration | StopAsyncIteration):
            return self._cut("provider")
        return self._cut("reader")

    def _cut(self, by: Literal["reader", "provider"]) -> StreamCut:
        return StreamCut(streamed="".join(self._streamed), usage=self._usage, by=by)

    def __enter__(self) -> GovernedStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _redacted(self, delta: StreamDelta) -> list[StreamPiece]:
        if isinstance(delta, TextDelta):
            self._streamed.append(delta.text)
            return _text(self._restored(self._text.feed(delta.text)))
        if isinstance(delta, ToolCallDelta):
            self._streamed.append(delta.arguments)
            return self._tool_call(delta)
        if isinstance(delta, ThinkingDelta):
            self._streamed.append(delta.thinking)
            return self._thought(delta)
        if isinstance(delta, UsageDelta):
            self._usage = delta.usage
            return [delta]
        return self._finished(delta)

    def _thought(self, delta: ThinkingDelta) -> list[StreamPiece]:
        """A thinking delta redacted (placeholders are not restored in thinking: it goes back to the
        provider as it came, so it keeps what the provider saw)."""
        if delta.data is not None:
            return [delta]
        block = self._thinking.setdefault(delta.index, _ThinkingFilter())
        block.raw.append(delta.thinking)
        text = block.redactor.feed(delta.thinking)
        if delta.signature is None:
            block.out.append(text)
            return [ThinkingDelta(delta.index, thinking=text)] if text else []
        text += block.redactor.finish()
        block.out.append(text)
        block.closed = True
        signed = "".join(block.out) == "".join(block.raw)
        pieces: list[StreamPiece] = [ThinkingDelta(delta.index, thinking=text)] if text else []
        return [*pieces, ThinkingDelta(delta.index, signature=delta.signature if signed else "")]

    def _restored(self, text: str) -> str:
        return self._restorer.feed(text) if self._restorer is not None else text

    def _tool_call(self, delta: ToolCallDelta) -> list[StreamPiece]:
        call = self._calls.get(delta.index)
        if call is None:
            call = self._calls[delta.index] = _ToolCallFilter()
            if self._pseudonyms is not None:
                call.restorer = StreamRestorer(self._pseudonyms, json_text=True)
        if delta.id is not None:
            call.id = redact(delta.id).text
        if delta.name is not None:
            call.name = redact(delta.name).text
        arguments = call.redactor.feed(delta.arguments)
        if call.restorer is not None:
            arguments = call.restorer.feed(arguments)
        return self._call_piece(delta.index, call, arguments)

    def _call_piece(self, index: int, call: _ToolCallFilter, arguments: str) -> list[StreamPiece]:
        if call.opened and not arguments:
            return []
        first = not call.opened
        call.opened = True
        return [ToolCallDelta(index, call.id if first else None, call.name if first else None, arguments)]

    def _finished(self, finish: StreamFinish) -> list[StreamPiece]:
        text = self._restored(self._text.finish())
        if self._restorer is not None:
            text += self._restorer.finish()
        rest: list[StreamPiece] = [
            ThinkingDelta(index, thinking=held)
            for index, block in sorted(self._thinking.items())
            if not block.closed and (held := block.redactor.finish())
        ]
        rest += _text(text)
        for index, call in sorted(self._calls.items()):
            arguments = call.redactor.finish()
            if call.restorer is not None:
                arguments = call.restorer.feed(arguments) + call.restorer.finish()
            rest += self._call_piece(index, call, arguments)
        self._end(finish.reply)
        return [*rest, self._outcome(self._finish(finish.reply))]


def _text(text: str) -> list[StreamPiece]:
    return [TextDelta(text)] if text else []
