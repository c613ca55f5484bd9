"""Server-Sent Events responses that stream under both servers the project runs on.

A stream is written once, as a plain (blocking) iterator of encoded events: it may wait on a provider
or poll the database. :func:`sse_response` serves it:

* **under ASGI** (uvicorn; see ``docs/decisions/0011-streaming.md``) as an *async* iterator, each ``next()`` of the
  blocking iterator run by ``sync_to_async`` in the request's own thread (the one Django already keeps
  for the request until its response closes), so the event loop never blocks, no thread is added per
  stream, and each event is sent as soon as it exists. Django buffers a *sync* iterator to its end
  under ASGI, which is why the view must not hand one over there;
* **under WSGI** (``manage.py runserver``, the embedded default, and Django's test ``Client``) as the
  plain iterator, which WSGI streams.

**Database connections.** An iterator that reads the database must release its connection before it
waits (on a provider, or between polls): call :func:`release_db_connection` from the iterator (it runs
in the thread that owns the connection, under both servers). Reading what the stream needs before it
starts and then releasing keeps a waiting stream from holding a connection: with ``CONN_MAX_AGE=0``
Django would otherwise keep the request's connection open until the response closes.

When the client goes away the iterator is closed (``close()`` on a generator), in its thread.

A streamed completion is written this way: the view builds its plan and calls
:func:`agents.runtime.send.governed_stream` (refusals, overflows and failures before the first delta
are answered as errors before any event), then hands :func:`sse_response` a generator that calls
:func:`release_db_connection`, iterates the governed stream (its text and tool-call deltas already
redacted) encoding each delta with :func:`sse_event`, and closes the stream in a ``finally``. The
stream's finish records its redaction events, which opens a connection again for that moment.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.http import HttpRequest, StreamingHttpResponse

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
    request: HttpRequest | Any, events: Iterable[bytes], *, status: int = 200
) -> StreamingHttpResponse:
    """``events`` as a ``text/event-stream`` response that streams under ASGI and WSGI alike (see the
    module docstring); proxies are asked not to buffer it."""
    content: Iterable[bytes] | AsyncIterator[bytes] = events
    if is_asgi(request):
        content = iterate_in_thread(iter(events))
    response = StreamingHttpResponse(content, content_type=CONTENT_TYPE, status=status)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy must pass events through, not buffer them
    return response


async def iterate_in_thread(iterator: Iterator[Any]) -> AsyncIterator[Any]:
    """The items of a blocking ``iterator``, each ``next()`` run in the request's thread
    (``thread_sensitive``); the iterator is closed there when the consumer stops early."""
    step = sync_to_async(_next_or_done, thread_sensitive=True)
    try:
        while True:
            item = await step(iterator)
            if item is _DONE:
                return
            yield item
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()


def _next_or_done(iterator: Iterator[Any]) -> Any:
    # StopIteration cannot cross an await (it would become a RuntimeError): a sentinel ends the loop.
    return next(iterator, _DONE)
