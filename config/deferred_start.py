"""A response whose status line waits for its first byte of body, under ASGI.

A completion is answered after its provider has answered, and its status (200, or the 502 of a
provider that failed, the 403 of a late refusal) is known only then. Django's handler sends a
response's status line as soon as the view returns it; a view that waits for its provider before it
returns holds a request thread for the whole wait, which is what a gateway with thousands of slow
streams cannot afford (docs/decisions/0011-streaming.md).

So a completion view returns at once, under ASGI, a streaming response over an async iterator that
waits on the event loop, and :class:`RequestThreads` (``config/request_thread.py``) gives every HTTP
request a :class:`DeferredStart` in its scope. A view that calls :meth:`DeferredStart.defer` has the
status line it returns held back until the first body chunk is sent; before that chunk the iterator
may :meth:`~DeferredStart.answer_with` another status and headers (an error, or a whole JSON answer).
The headers the middleware added (the request id, security headers) are kept; the ones the answer
names are replaced. Everything goes through the ASGI interface alone: the scope (``request.scope``
under Django's ASGI handler) and the ``send`` callable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from rest_framework.request import Request

SCOPE_KEY = "config.deferred_start"
Send = Callable[[dict[str, Any]], Awaitable[None]]


class DeferredStart:
    """One HTTP request's held status line (see the module docstring)."""

    __slots__ = ("_deferred", "_headers", "_held", "_status")

    def __init__(self) -> None:
        self._deferred = False
        self._held: dict[str, Any] | None = None
        self._status: int | None = None
        self._headers: list[tuple[bytes, bytes]] = []

    def defer(self) -> None:
        """Hold the response's status line until its first body chunk (call it before returning it)."""
        self._deferred = True

    def answer_with(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """Send ``status`` and ``headers`` (replacing headers of the same names) instead of what the
        response said; only before its first body chunk."""
        self._status = status
        self._headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]

    def sending(self, send: Send) -> Send:
        """``send`` with this request's status line held when deferred."""

        async def deferring(message: dict[str, Any]) -> None:
            if self._deferred:
                if message["type"] == "http.response.start":
                    self._held = message
                    return
                if self._held is not None:
                    held, self._held = self._held, None
                    await send(self._final(held))
            await send(message)

        return deferring

    def _final(self, start: dict[str, Any]) -> dict[str, Any]:
        if self._status is None:
            return start
        replaced = {name.lower() for name, _ in self._headers}
        kept = [(name, value) for name, value in start.get("headers", ()) if name.lower() not in replaced]
        return {**start, "status": self._status, "headers": kept + self._headers}


def deferred_start(request: HttpRequest | Request) -> DeferredStart:
    """The ASGI request's :class:`DeferredStart` (DRF's request reads it from Django's). Raises
    ``ImproperlyConfigured`` when the request was not served through ``RequestThreads``: the project's
    ASGI application is ``config.asgi:application``, never Django's bare one."""
    scope = getattr(request, "scope", None)
    start = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    if not isinstance(start, DeferredStart):
        raise ImproperlyConfigured("serve config.asgi:application: a completion needs its DeferredStart")
    return start
