"""Serving one governed call: the completion endpoints are plain Django views that wait on the
provider on the server's event loop (docs/decisions/0011-streaming.md).

A :class:`GovernedCallApi` keeps DRF for what DRF does well (authentication, scopes, throttles,
validation, the error answers and the schema) and serves itself: :meth:`GovernedCallApi.as_view` is
a Django view that

1. runs DRF's checks and the view's ``post`` in the request's thread (everything that reads the
   database), which validates and builds the call (:class:`Served`) and prepares it up to its first
   provider attempt (:meth:`~agents.runtime.send.GovernedCall.prepare`);
2. then, on the server's event loop (``async_to_sync`` from the request's thread), awaits the answer
   (:meth:`~agents.runtime.send.GovernedCall.asend`) or opens its stream
   (:meth:`~agents.runtime.send.GovernedCall.astream`, a ``StreamingHttpResponse`` over an async
   iterator that the server reads on its loop). The request's thread waits while the stream opens
   (up to the provider's first delta, so that an error before it is still answered with its status);
   after that the stream holds no thread.

The view is synchronous so that under WSGI (``runserver``, Django's test client), where the request
has no event loop, Django does not start one per request to call it: step 1 makes the call itself
with the blocking driver and answers it (a stream as a blocking iterator, which WSGI streams). Any
error before the answer is answered as DRF answers an error in a view.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.apis.sse import CONTENT_TYPE, event_stream_headers, is_asgi, release_db_connection, sse_response
from agents.providers.failures import ProviderError
from agents.providers.streams import StreamDelta
from agents.runtime.outcome import Answered, CallOutcome, Ended
from agents.runtime.streaming import GovernedStream
from agents.services import Completion, CompletionCall
from config.request_thread import release_connections


class StreamShape(Protocol):
    """The server-sent events of one streamed answer, in an API's own shape."""

    def opening(self) -> list[bytes]: ...

    def piece(self, delta: StreamDelta) -> list[bytes]: ...

    def finish(self, completion: Completion) -> list[bytes]: ...

    def failed(self, failure: ProviderError) -> list[bytes]: ...

    def done(self) -> list[bytes]: ...


@dataclass(frozen=True)
class Served:
    """What a view's ``post`` serves: the ``completion`` call, the data of its whole answer (``body``),
    or, with ``stream``, its answer streamed in that shape."""

    completion: CompletionCall
    body: Callable[[Completion], dict[str, Any]]
    stream: StreamShape | None = None


class GovernedCallApi(APIView, ABC):
    """An API view whose ``post`` returns the governed call it serves (see the module docstring)."""

    @abstractmethod
    def post(self, request: Request) -> Served:
        """Validate the request and build the call it asks for."""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Callable[..., HttpResponseBase]:
        super().as_view(**initkwargs)  # DRF's checks of the class; its synchronous view is not served

        def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            api = cls(**initkwargs)
            started = api.started(request, *args, **kwargs)
            if isinstance(started, HttpResponseBase):
                return started
            # Under ASGI: the answer is awaited, or its stream opened, on the server's event loop.
            return async_to_sync(api.answered)(started)

        vars(view).update(cls=cls, initkwargs=initkwargs)  # read by the schema generator, as DRF's
        return csrf_exempt(view)

    def started(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase | Served:
        """DRF's checks and ``post`` in the request's thread: the call prepared for the event loop, or
        (under WSGI) answered; an error answered as DRF answers one."""
        self.args, self.kwargs = args, kwargs
        self.request = drf_request = self.initialize_request(request, *args, **kwargs)
        self.headers = self.default_response_headers
        try:
            self.initial(drf_request, *args, **kwargs)
            method = request.method.lower() if request.method else ""
            handler = getattr(self, method, None) if method in self.http_method_names else None
            served = (handler or self.http_method_not_allowed)(drf_request, *args, **kwargs)
            if isinstance(served, Response):  # OPTIONS, or a method the view does not serve
                return self.rendered(served)
            call = served.completion.call
            if not is_asgi(request):
                return self._blocking(served)
            ended = call.prepare(stream=served.stream is not None)
            if ended is not None:
                return self.error_answer(ended.error)
            # Nothing is held while the provider answers: the thread may wait with the view (a whole
            # answer is awaited inside the synchronous middleware chain).
            release_connections()
            return served
        except Exception as error:
            return self.error_answer(error)

    async def answered(self, served: Served) -> HttpResponseBase:
        """The prepared call made on the event loop: its whole answer, or its stream."""
        completion, call = served.completion, served.completion.call
        try:
            if served.stream is None:
                return await call.asend(lambda outcome: self.answer(served, outcome))
            stream = await call.astream()
            if isinstance(stream, Ended):
                return await sync_to_async(self.error_answer, thread_sensitive=True)(stream.error)
            response = StreamingHttpResponse(
                events_async(completion, stream, served.stream), content_type=CONTENT_TYPE
            )
            return event_stream_headers(response)
        except Exception as error:
            return await sync_to_async(self.error_answer, thread_sensitive=True)(error)

    def answer(self, served: Served, outcome: CallOutcome) -> HttpResponseBase:
        """The response to a whole call's ``outcome``: its body, or its error answered."""
        if isinstance(outcome, Ended):
            return self.error_answer(outcome.error)
        return self.rendered(Response(served.body(served.completion.finished(outcome))))

    def _blocking(self, served: Served) -> HttpResponseBase:
        completion = served.completion
        if served.stream is None:
            return self.answer(served, completion.call.send())
        stream = completion.call.stream()
        if isinstance(stream, Ended):
            return self.error_answer(stream.error)
        # Closing the response ends the stream even if no event was read (the client left first).
        return sse_response(self.request, events(completion, stream, served.stream), closed=stream.close)

    def error_answer(self, error: Exception) -> HttpResponseBase:
        """The answer to ``error``, made as DRF makes it for an error raised inside a view."""
        return self.rendered(self.handle_exception(error))

    def rendered(self, response: Response) -> HttpResponseBase:
        final = self.finalize_response(self.request, response, *self.args, **self.kwargs)
        assert isinstance(final, Response)
        return final.render()


def events(completion: CompletionCall, stream: GovernedStream, shape: StreamShape) -> Iterator[bytes]:
    """The events of ``stream`` read blocking (WSGI): ``shape``'s opening, a piece per delta, the finish
    (the call finished: its ledger row), then its end; a provider failure after the first delta ends
    with ``shape``'s failure event. Closes the stream."""
    with stream as pieces:
        if not connection.allow_thread_sharing:  # shared only by a test's live server, which owns it
            release_db_connection()  # what the stream needs was read; nothing is held while it waits
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
