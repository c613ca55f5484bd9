"""Serving one governed call: the completion endpoints are DRF views that wait on the provider on
the server's event loop (docs/decisions/0011-streaming.md).

A :class:`GovernedCallApi` is a plain DRF view: DRF's ``dispatch`` authenticates, checks scopes and
throttles, calls ``post`` and answers an error raised anywhere in it. Its ``post`` validates the
request, builds the call (:class:`Served`) and returns :meth:`GovernedCallApi.answer` of it, the one
bridge between the request's thread and the event loop:

1. in the request's thread (everything that reads the database) the call is prepared up to its
   first provider attempt (:meth:`~agents.runtime.send.GovernedCall.prepare`);
2. the view then returns at once a ``StreamingHttpResponse`` over an async iterator that the server
   reads on its event loop: it awaits the answer (:meth:`~agents.runtime.send.GovernedCall.asend`,
   ``gateway/apis/answered_later.py``) or opens the stream
   (:meth:`~agents.runtime.send.GovernedCall.astream`). The response's status line is held until
   the first byte (``config/deferred_start.py``), so an error before it is still answered with its
   status, and no thread waits on the provider.

The view is synchronous so that under WSGI (``runserver``, Django's test client), where the request
has no event loop, Django does not start one per request to call it: there :meth:`answer` makes the
call with the blocking driver (a stream as a blocking iterator, which WSGI streams).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from asgiref.sync import sync_to_async
from django.db import connection
from django.http import HttpResponseBase, StreamingHttpResponse
from rest_framework.request import Request
from rest_framework.response import Response

from agents.runtime.outcome import Answered, CallOutcome, Ended
from agents.runtime.streaming import GovernedStream
from config.deferred_start import DeferredStart, deferred_start
from config.request_thread import release_connections
from gateway.apis.answered_later import AnsweredLater, answered_with
from gateway.apis.sse import (
    CONTENT_TYPE,
    event_stream_headers,
    sse_response,
)
from gateway.services import Completion, CompletionCall
from providers.failures import ProviderError
from providers.streams import StreamDelta


class StreamShape(Protocol):
    """The server-sent events of one streamed answer, in an API's own shape."""

    def opening(self) -> list[bytes]: ...

    def piece(self, delta: StreamDelta) -> list[bytes]: ...

    def finish(self, completion: Completion) -> list[bytes]: ...

    def failed(self, failure: ProviderError) -> list[bytes]: ...

    def done(self) -> list[bytes]: ...


@dataclass(frozen=True, slots=True)
class Served:
    """What a view's ``post`` serves: the ``completion`` call, the data of its whole answer (``body``),
    or, with ``stream``, its answer streamed in that shape."""

    completion: CompletionCall
    body: Callable[[Completion], dict[str, Any]]
    stream: StreamShape | None = None


class GovernedCallApi(AnsweredLater, ABC):
    """An API view whose ``post`` answers the governed call it serves (see the module docstring)."""

    @abstractmethod
    def post(self, request: Request) -> HttpResponseBase:
        """Validate the request, build the call it asks for and return :meth:`answer` of it."""

    def answer(self, served: Served) -> HttpResponseBase:
        """The response to ``served``, made in the request's thread, inside DRF's ``dispatch`` (which
        answers an error raised here as it answers one raised in ``post``). Under ASGI the call is
        prepared here and made on the event loop, after this returns: the response's status line
        waits for its answer (``config/deferred_start.py``), so no thread waits with it. Under WSGI
        it is made here, blocking."""
        if not self.asgi:
            return self.answered_blocking(served)
        start = deferred_start(self.request)
        ended = served.completion.call.prepare(stream=served.stream is not None)
        if ended is not None:
            raise ended.error
        # Nothing is held while the provider answers.
        release_connections()
        if served.stream is not None:
            start.defer()
            streamed = StreamingHttpResponse(self.streamed_later(served, start), content_type=CONTENT_TYPE)
            return event_stream_headers(streamed)
        completion = served.completion

        def finished(outcome: CallOutcome) -> HttpResponseBase:
            return self.rendered(Response(served.body(completion.finished(answered(outcome)))))

        return self.answer_later(start, lambda: completion.call.asend(finished))

    async def streamed_later(self, served: Served, start: DeferredStart) -> AsyncIterator[bytes]:
        """The stream opened on the event loop, then its events; a call that ended before its first
        delta is answered as :meth:`rendered_error` answers its error, with its own status."""
        try:
            stream = opened(await served.completion.call.astream())
        except Exception as error:
            response = await sync_to_async(self.rendered_error, thread_sensitive=True)(error)
            yield answered_with(start, response)
            return
        async for event in events_async(served.completion, stream, served.stream):  # type: ignore[arg-type]
            yield event

    def answered_blocking(self, served: Served) -> HttpResponseBase:
        """The call made with the blocking driver (WSGI): its whole answer, or its stream."""
        completion = served.completion
        if served.stream is None:
            return Response(served.body(completion.finished(answered(completion.call.send()))))
        stream = opened(completion.call.stream())
        # Closing the response ends the stream even if no event was read (the client left first).
        events_read = events(completion, stream, served.stream)
        return sse_response(events_read, asgi=False, closed=stream.close)


def answered(outcome: CallOutcome) -> Answered:
    """A whole call's answer; an ended call's error is raised, for DRF's ``dispatch`` to answer as it
    answers one raised in ``post``."""
    if isinstance(outcome, Ended):
        raise outcome.error
    return outcome


def opened(stream: GovernedStream | Ended) -> GovernedStream:
    """An opened stream; a call that ended before its first delta raises its error, as :func:`answered`."""
    if isinstance(stream, Ended):
        raise stream.error
    return stream


def events(completion: CompletionCall, stream: GovernedStream, shape: StreamShape) -> Iterator[bytes]:
    """The events of ``stream`` read blocking (WSGI): ``shape``'s opening, a piece per delta, the finish
    (the call finished: its ledger row), then its end; a provider failure after the first delta ends
    with ``shape``'s failure event. Closes the stream."""
    with stream as pieces:
        if not connection.allow_thread_sharing:  # shared only by a test's live server, which owns it
            release_connections()  # what the stream needs was read; nothing is held while it waits
        yield from shape.opening()
        for piece in pieces:
            if isinstance(piece, Ended):
                yield from shape.failed(_broken(piece))
                return
            if isinstance(piece, Answered):
                yield from shape.finish(completion.finished(piece))
            else:
                yield from shape.piece(piece)
    yield from shape.done()


async def events_async(
    completion: CompletionCall, stream: GovernedStream, shape: StreamShape
) -> AsyncIterator[bytes]:
    """:func:`events` of a stream read on the event loop: the same events; the call's finish is
    written in the request's thread."""
    try:
        for event in shape.opening():
            yield event
        async for piece in stream:
            if isinstance(piece, Ended):
                for event in shape.failed(_broken(piece)):
                    yield event
                return
            if isinstance(piece, Answered):
                finished = await sync_to_async(completion.finished, thread_sensitive=True)(piece)
                pieces = shape.finish(finished)
            else:
                pieces = shape.piece(piece)
            for event in pieces:
                yield event
        for event in shape.done():
            yield event
    finally:
        await stream.aclose()


def _broken(ended: Ended) -> ProviderError:
    """The provider's failure that ended an open stream (an open stream ends no other way)."""
    assert isinstance(ended.error, ProviderError)
    return ended.error
