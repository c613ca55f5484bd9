"""The threads that run the synchronous code of requests under ASGI.

Django's ASGI handler runs each request inside asgiref's ``ThreadSensitiveContext``: its first
thread-sensitive ``sync_to_async`` call (the ``request_started`` receivers, the synchronous view)
starts a one-thread executor that lives until the response is closed. A request then holds a thread
from its start to its end: while it waits for the CPU behind the requests before it, and while a
stream waits seconds on a provider, doing nothing. With a thousand open streams that is a thousand
threads, their stacks and their state, and a thousand threads taking turns at the interpreter lock
with the event loop.

:class:`RequestThreads` serves Django's application with an executor of its own per request
(asgiref's ``ThreadSensitiveContext(executor=...)``): each of the request's synchronous calls runs,
one at a time as before, on a thread borrowed from a small pool shared by all requests
(:data:`WORKERS`), and the thread goes back after the call. A request holds a thread only while its
synchronous code runs. The calls of one request may run on different threads, so after each call the
thread gives its database connections back (:func:`release_connections`): a PostgreSQL connection
is closed (a pooled one goes back to its pool), so a request waiting on a provider holds none; a
SQLite one stays with the thread, idle in autocommit, for its next call. No transaction spans two
calls: the middleware chain with the view is one call (:meth:`StreamingASGIHandler.load_middleware`),
so a request's synchronous calls are the ``request_started`` receivers, the chain with the view, what
a stream's finish records and the response's close.
:class:`StreamingASGIHandler` opens a streamed completion's provider call on the event loop once that
chain has returned. See docs/decisions/0011-streaming.md.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.db import connections
from django.http import HttpRequest, HttpResponseBase
from django.utils.log import log_response

R = TypeVar("R")
Scope = dict[str, Any]
AsgiApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
Task = Callable[[], None]


class Workers:
    """Threads that run tasks (the synchronous calls of requests), one task at a time each. ``size``
    threads are kept; a task finding none free waits in line. When no thread has come free for
    ``patience`` seconds while tasks wait (every thread held by a long call: a view that waits on a
    provider), one more is started (at most one per ``patience``), so slow calls delay the line and
    never block it. Threads beyond ``size`` end when they find the line empty."""

    def __init__(self, size: int, patience: float) -> None:
        self.size, self.patience = size, patience
        self._lock = threading.Condition()
        self._line: deque[Task] = deque()
        self._idle = 0
        self._count = 0
        self._done = 0  # tasks finished so far; the watch compares it between two looks
        self._watch: threading.Thread | None = None

    @property
    def threads(self) -> int:
        return self._count

    def run(self, task: Task) -> None:
        with self._lock:
            self._line.append(task)
            if self._idle:
                self._lock.notify_all()
            elif self._count < self.size:
                self._start()
            elif self._watch is None:
                self._watch = threading.Thread(target=self._watching, name="request-threads", daemon=True)
                self._watch.start()
            else:
                self._lock.notify_all()

    def _start(self) -> None:
        self._count += 1
        threading.Thread(target=self._working, name="request", daemon=True).start()

    def _working(self) -> None:
        while True:
            with self._lock:
                while not self._line:
                    if self._count > self.size:
                        self._count -= 1
                        close_connections()  # the thread ends: nothing of it may stay open
                        return
                    self._idle += 1
                    self._lock.wait()
                    self._idle -= 1
                task = self._line.popleft()
            try:
                task()
            finally:
                release_connections()
                with self._lock:
                    self._done += 1

    def _watching(self) -> None:
        with self._lock:
            while True:
                if not self._line:
                    self._lock.wait()
                    continue
                done = self._done
                self._lock.wait(self.patience)
                if self._line and not self._idle and self._done == done:  # nothing came free
                    self._start()


def release_connections() -> None:
    """Give back this thread's database connections after a task: a server's connection is closed (a
    pooled one goes back to its pool), so no thread holds one between calls; a SQLite connection,
    which holds nothing of a server, stays with the thread for its next task as long as
    ``CONN_MAX_AGE`` allows, since a new one reads the whole schema before its first statement (about
    a millisecond). One in a transaction that a test holds open stays as it is."""
    for wrapper in connections.all(initialized_only=True):
        if wrapper.in_atomic_block:
            continue
        if wrapper.vendor == "sqlite":
            wrapper.close_if_unusable_or_obsolete()
        else:
            wrapper.close()


def close_connections() -> None:
    """Close this thread's database connections (a pooled one goes back to its pool), except one in a
    transaction that a test holds open."""
    for wrapper in connections.all(initialized_only=True):
        if not wrapper.in_atomic_block:
            wrapper.close()


# Threads kept for requests (REQUEST_THREADS, default 8: the synchronous part of a request is CPU, and
# this machine type has 2 cores), and how long tasks wait for one before another is started while
# every one is held (REQUEST_THREAD_PATIENCE_MS, default 50).
WORKERS = Workers(
    size=max(1, int(os.environ.get("REQUEST_THREADS", "8"))),
    patience=max(1, int(os.environ.get("REQUEST_THREAD_PATIENCE_MS", "50"))) / 1000,
)


class RequestThread(Executor):
    """One request's thread-sensitive calls, each run on a thread of ``workers`` (see the module
    docstring). Django's handler makes them one at a time."""

    def __init__(self, workers: Workers | None = None) -> None:
        self._workers = workers or WORKERS

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        future: Future[R] = Future()

        def task() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:
                future.set_exception(error)

        self._workers.run(task)
        return future


class RequestThreads:
    """An ASGI application (Django's) whose HTTP requests run their synchronous calls on the shared
    :data:`WORKERS`."""

    def __init__(self, application: AsgiApp) -> None:
        self.application = application

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] != "http":
            await self.application(scope, receive, send)
            return
        async with ThreadSensitiveContext(executor=RequestThread()):
            await self.application(scope, receive, send)


class StreamingASGIHandler(ASGIHandler):
    """Django's ASGI handler, which opens a response that is still to be opened on the event loop: a
    response with an ``opened`` coroutine method (``agents.apis.sse.PendingStream``) is awaited after
    the middleware chain has run (in one request thread, as Django runs a synchronous chain) and
    replaced by what it returns: itself, its events ready, or the error answer made for a failure
    before them."""

    def load_middleware(self, is_async: bool = False) -> None:
        """The middleware chain with the URL resolution and the view as one synchronous call, run on a
        request thread. Django's asynchronous chain ends in its asynchronous inner handler whatever
        the middleware: the synchronous middleware run on a thread, step out to the event loop for
        the URL resolution, and back onto the thread for the synchronous view, two more hand-overs
        between the thread and the loop on every request, each waiting for the other side to be
        scheduled. Every middleware and view of the project is synchronous."""
        super().load_middleware(is_async=False)
        if is_async:
            chain: Callable[[HttpRequest], HttpResponseBase] = self._middleware_chain  # type: ignore[has-type]
            self._middleware_chain = sync_to_async(chain, thread_sensitive=True)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        response = await super().get_response_async(request)
        opened = getattr(response, "opened", None)
        if opened is None:
            return response
        answer: HttpResponseBase = await opened()
        if answer is not response:
            # What Django did for the response it returned, done for the answer that replaces it.
            answer._resource_closers.append(request.close)  # type: ignore[attr-defined]
            if answer.status_code >= 400:
                await sync_to_async(log_response, thread_sensitive=False)(
                    "%s: %s",
                    answer.reason_phrase,
                    request.path,
                    response=answer,  # type: ignore[arg-type]
                    request=request,
                )
        return answer


def asgi_application() -> RequestThreads:
    """The project's ASGI application: Django's, opening pending streams on the loop, with its
    requests' synchronous calls on the shared threads (``config/asgi.py``)."""
    django.setup(set_prefix=False)
    return RequestThreads(StreamingASGIHandler())
