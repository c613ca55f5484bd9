"""Server-Sent Events responses that stream under both servers the project runs on.

A stream is written once, as a plain (blocking) iterator of encoded events: it may wait on a provider
or poll the database. :func:`sse_response` serves it:

* **under ASGI** (uvicorn; see ``docs/decisions/0011-streaming.md``) as an *async* iterator, each
  ``next()`` of the blocking iterator run by ``sync_to_async`` in one thread of the stream's own (not
  one of the few threads requests share, ``config/request_thread.py``, which a stream polling for
  minutes must not hold), so the event loop never blocks and each event is sent as soon as it exists.
  Django buffers a *sync* iterator to its end under ASGI, which is why the view must not hand one over
  there;
* **under WSGI** (``manage.py runserver``, the embedded default, and Django's test ``Client``) as the
  plain iterator, which WSGI streams.

**Database connections.** An iterator that reads the database must release its connection before it
waits (on a provider, or between polls): call :func:`release_db_connection` from the iterator (it runs
in the thread that owns the connection, under both servers). Reading what the stream needs before it
starts and then releasing keeps a waiting stream from holding a connection: with ``CONN_MAX_AGE=0``
Django would otherwise keep the request's connection open until the response closes.

When the client goes away the iterator is closed (``close()`` on a generator), in its thread.

**A stream that waits on a provider** (a streamed chat completion) is served under ASGI without a
thread: the view does what reads the database (in a request thread) and returns a
:class:`PendingStream`; the project's ASGI handler (``config/request_thread.py``) opens it on the
event loop, once the middleware chain has run, through the SDK's async client, and answers either
with its
events (an async iterator) or, when it failed before its first delta, with the error the view's
exception handling makes of it, so the status is still the error's. Under WSGI the view opens the
stream itself and hands :func:`sse_response` a blocking iterator, as above.

A streamed completion is written this way: the view builds its plan and calls
:meth:`agents.runtime.send.GovernedSend.stream` (refusals, overflows and failures before the first delta
are answered as errors before any event), then hands :func:`sse_response` a generator that calls
:func:`release_db_connection`, iterates the governed stream (its text and tool-call deltas already
redacted) encoding each delta with :func:`sse_event`, and closes the stream in a ``finally``. The
stream's finish records its redaction events, which opens a connection again for that moment.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse

from config.request_thread import close_connections

CONTENT_TYPE = "text/event-stream; charset=utf-8"
_DONE = object()


def sse_event(data: Any, *, event: str | None = None, event_id: int | str | None = None) -> bytes:
    """One event: ``data`` as compact JSON (a ``str`` is sent as it is, e.g. ``[DONE]``; it must not
    hold a line break), with an optional ``event:`` name and ``id:``."""
    lines = [f"id: {event_id}"] if event_id is not None else []
    if event is not None:
        lines.append(f"event: {event}")
    text = data if isinstance(data, str) else json.dumps(data, cls=DjangoJSONEncoder, separators=(",", ":"))
    if "\n" in text or "\r" in text:
        raise ValueError("an SSE data line cannot hold a line break")
    lines.append(f"data: {text}")
    return ("\n".join(lines) + "\n\n").encode()


def sse_comment(text: str = "") -> bytes:
    """A comment line (clients ignore it): a keep-alive through proxies."""
    return f": {text}\n\n".encode()


def sse_retry(milliseconds: int) -> bytes:
    return f"retry: {milliseconds}\n\n".encode()


def release_db_connection() -> None:
    """Close this thread's database connection (a pooled one goes back to its pool). Call it from the
    event iterator, which runs in the thread that owns the connection. Inside ``atomic()`` (a test's
    transaction) it does nothing: closing there would abort the transaction."""
    if not connection.in_atomic_block:
        connection.close()


def is_asgi(request: Any) -> bool:
    """Whether ``request`` (a Django or DRF request) is served by the ASGI handler."""
    return isinstance(getattr(request, "_request", request), ASGIRequest)


def sse_response(
    request: HttpRequest | Any,
    events: Iterable[bytes],
    *,
    status: int = 200,
    closed: Callable[[], None] | None = None,
) -> StreamingHttpResponse:
    """``events`` as a ``text/event-stream`` response that streams under ASGI and WSGI alike (see the
    module docstring); proxies are asked not to buffer it. ``closed`` is called when the response is
    closed, whether or not its events were read: a generator never started is not run by its
    ``close()``, and a client may go away before the first event (a provider stream must end then)."""
    content: Iterable[bytes] | AsyncIterator[bytes] = events
    if closed is not None:
        content = events = _ClosingEvents(iter(events), closed)
    if is_asgi(request):
        content = iterate_in_thread(iter(events))
    return _event_stream(StreamingHttpResponse(content, content_type=CONTENT_TYPE, status=status))


class _ClosingEvents(Iterator[bytes]):
    """``events`` whose ``close()`` (the response's, or the ASGI thread's) closes them, then calls
    ``closed``."""

    def __init__(self, events: Iterator[bytes], closed: Callable[[], None]) -> None:
        self._events, self._closed = events, closed

    def __next__(self) -> bytes:
        return next(self._events)

    def close(self) -> None:
        try:
            close = getattr(self._events, "close", None)
            if close is not None:
                close()
        finally:
            self._closed()


def _event_stream(response: StreamingHttpResponse) -> StreamingHttpResponse:
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy must pass events through, not buffer them
    return response


# Opens a stream on the event loop and returns its encoded events; raises what failed before them.
Opener = Callable[[], Awaitable[AsyncIterator[bytes]]]
_STREAM_HEADERS = {"content-type", "cache-control", "x-accel-buffering"}


class PendingStream(StreamingHttpResponse):
    """An event stream under ASGI whose opening (the provider's first delta) is still to come: the
    project's ASGI handler (``config/request_thread.py``) awaits :meth:`opened` before the response
    starts, which opens it with ``opener``, and answers
    ``failed(error)`` instead when that raises (the view's error answer, made in the request's
    thread). Read what the stream needs before returning it: the request's thread gives its database
    connection back once the view has returned (``config/request_thread.py``), and the stream holds
    none while it waits."""

    def __init__(self, opener: Opener, failed: Callable[[Exception], HttpResponseBase]) -> None:
        super().__init__((), content_type=CONTENT_TYPE)
        _event_stream(self)
        self._opener = opener
        self._failed = failed

    async def opened(self) -> HttpResponseBase:
        try:
            self.streaming_content = await self._opener()
        except Exception as error:
            answer = await sync_to_async(self._failed, thread_sensitive=True)(error)
            return _with_headers_of(self, answer, _STREAM_HEADERS)
        return self


class PendingAnswer(HttpResponse):
    """A whole answer under ASGI whose provider call is still to be made: the project's ASGI handler
    awaits :meth:`opened`, which awaits ``answer()`` (the call on the event loop, its answer made in
    the request's thread) or makes ``failed(error)`` when that raises, as :class:`PendingStream` does.
    This response itself is never sent: what the middleware set on it is carried over to the answer."""

    def __init__(
        self,
        answer: Callable[[], Awaitable[HttpResponseBase]],
        failed: Callable[[Exception], HttpResponseBase],
    ) -> None:
        super().__init__()
        self._answer = answer
        self._failed = failed

    async def opened(self) -> HttpResponseBase:
        try:
            answer = await self._answer()
        except Exception as error:
            answer = await sync_to_async(self._failed, thread_sensitive=True)(error)
        return _with_headers_of(self, answer, {"content-type", "content-length"})


def _with_headers_of(pending: HttpResponseBase, answer: HttpResponseBase, own: set[str]) -> HttpResponseBase:
    """``answer`` with the headers the middleware set on ``pending`` (the request id, ...) but ``own``
    (the pending response's own) and those ``answer`` sets itself."""
    for header, value in pending.items():
        if header.lower() not in own and header not in answer:
            answer[header] = value
    return answer


async def iterate_in_thread(iterator: Iterator[Any]) -> AsyncIterator[Any]:
    """The items of a blocking ``iterator``, each ``next()`` run in one thread of the stream's own
    (not one of the threads requests share, ``config/request_thread.py``: a stream that polls for
    minutes must not hold one of those); the iterator is closed there when the consumer stops
    early, and the thread's database connections closed."""
    own = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stream")
    step = sync_to_async(_next_or_done, thread_sensitive=False, executor=own)
    try:
        while True:
            item = await step(iterator)
            if item is _DONE:
                return
            yield item
    finally:
        try:
            close = getattr(iterator, "close", None)
            if close is not None:
                await sync_to_async(close, thread_sensitive=False, executor=own)()
        finally:
            own.submit(close_connections)
            own.shutdown(wait=False)


def _next_or_done(iterator: Iterator[Any]) -> Any:
    # StopIteration cannot cross an await (it would become a RuntimeError): a sentinel ends the loop.
    return next(iterator, _DONE)
