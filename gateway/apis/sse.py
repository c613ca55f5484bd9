"""Server-Sent Events responses that stream under both servers the project runs on.

A stream is written once, as a plain (blocking) iterator of encoded events: it may wait on a provider
or poll the database. :func:`sse_response` serves it:

* **under ASGI** (uvicorn; see ``docs/decisions/0011-streaming.md``) as an *async* iterator, each
  ``next()`` of the blocking iterator run by ``sync_to_async`` in one thread of the stream's own, so
  the event loop never blocks and each event is sent as soon as it exists. Django buffers a *sync*
  iterator to its end under ASGI, which is why the view must not hand one over there;
* **under WSGI** (``manage.py runserver``, the embedded default, and Django's test ``Client``) as the
  plain iterator, which WSGI streams.

**Database connections.** An iterator that reads the database must release its connection before it
waits (between polls): call :func:`config.request_thread.release_connections` from the iterator (it
runs in the thread that owns the connection, under both servers). A server's connection is closed (a
pooled one goes back to its pool); a SQLite one, which holds no lock while idle, is kept for the next
statement (opening one costs a millisecond or more).

When the client goes away the iterator is closed (``close()`` on a generator), in its thread.

A streamed completion waits on its provider, not on the database: it is served by
``gateway/apis/serving.py``, on the event loop under ASGI (an async iterator of its own), through
:func:`sse_response` under WSGI. Which server serves a request is noted by :class:`EventStreamApi`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, StreamingHttpResponse
from rest_framework.request import Request
from rest_framework.views import APIView

from config.database import connections_close

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


class EventStreamApi(APIView):
    """An API view that may answer with an event stream. It notes whether the ASGI handler serves its
    request (``asgi``), which decides how a stream is served (:func:`sse_response`): DRF's
    ``initialize_request`` hook is the last place the request is still Django's own."""

    asgi = False

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        self.asgi = isinstance(request, ASGIRequest)
        return super().initialize_request(request, *args, **kwargs)


def sse_response(
    events: Iterable[bytes],
    *,
    asgi: bool,
    status: int = 200,
    closed: Callable[[], None] | None = None,
) -> StreamingHttpResponse:
    """``events`` as a ``text/event-stream`` response that streams under ASGI (``asgi``, as an
    :class:`EventStreamApi` notes it) and WSGI alike (see the module docstring); proxies are asked not
    to buffer it. ``closed`` is called when the response is closed, whether or not its events were
    read: a generator never started is not run by its ``close()``, and a client may go away before the
    first event (a provider stream must end then)."""
    content: Iterable[bytes] | AsyncIterator[bytes] = events
    if closed is not None:
        content = events = _ClosingEvents(iter(events), closed)
    if asgi:
        content = iterate_in_thread(iter(events))
    return event_stream_headers(StreamingHttpResponse(content, content_type=CONTENT_TYPE, status=status))


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


def event_stream_headers(response: StreamingHttpResponse) -> StreamingHttpResponse:
    """``response`` with the headers of an event stream: not cached, not buffered by a proxy."""
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy must pass events through, not buffer them
    return response


async def iterate_in_thread(iterator: Iterator[Any]) -> AsyncIterator[Any]:
    """The items of a blocking ``iterator``, each ``next()`` run in one thread of the stream's own
    (a stream that polls for minutes must not hold the request's thread); the iterator is closed there when the consumer stops
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
            own.submit(connections_close)
            own.shutdown(wait=False)


def _next_or_done(iterator: Iterator[Any]) -> Any:
    # StopIteration cannot cross an await (it would become a RuntimeError): a sentinel ends the loop.
    return next(iterator, _DONE)
