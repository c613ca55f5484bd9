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
SQLite one stays with the thread, idle in autocommit, for its next call (a new thread would open a
new one, which reads the whole schema first). No transaction spans two calls: Django runs the
synchronous middleware chain as one call, and an async view's database work in calls of its own
(``gateway/apis/serving.py``). The executor is asgiref's public ``ThreadSensitiveContext(executor=...)``
around Django's application (``config/asgi.py``). See docs/decisions/0011-streaming.md.

That application is :class:`OneCallHandler`: Django's ASGI handler with its middleware chain loaded
as WSGI loads it, synchronous from end to end, and run as one call on a request thread. Django's own
ASGI handler loads the chain for the event loop: a chain that holds any synchronous middleware then
runs as a call on a thread that hands the innermost step back to the loop, which hands the view back
to the thread (three round trips between the loop and a thread for one request, where one does), and
each round trip costs about 0.1 ms of CPU in thread wake-ups on a small virtual machine. Every view of
the project is synchronous (the completion views return a response whose body the loop produces),
so nothing is lost. In the serving process (``config/asgi.py``, :func:`asgi_application`) Django's
own ``request_started`` receivers run in that call too, rather than in a call of their
own before it: a request crosses to a thread for the chain and view, the view's finish (if it has
one) and the response's ``close``.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_started
from django.db import close_old_connections, connections, reset_queries
from django.http import HttpRequest, HttpResponseBase

from config.database import connections_close
from config.deferred_start import SCOPE_KEY, DeferredStart

R = TypeVar("R")
Scope = dict[str, Any]
AsgiApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
Task = Callable[[], None]


class Workers:
    """Threads that run tasks (the synchronous calls of requests), one task at a time each. ``size``
    threads are kept; a task finding none free waits in line. When no thread has come free for
    ``patience`` seconds while tasks wait (every thread held by a long call: a view that waits on a
    provider), one more is started (at most one per ``patience``), so slow calls delay the line and
    never block it, up to ``most`` threads (default four times ``size``): past that, tasks wait their
    turn. Threads beyond ``size`` end when they find the line empty.

    A task wakes one idle thread, the one that came free last (its stack and its allocator's arena are
    the warmest): waking them all (``notify_all``) cost every other idle thread a wake-up and a sleep
    per task, and waking the one idle longest spreads the work over every thread's memory. The watch
    that adds threads waits on a condition of its own, woken only when a task finds no thread free."""

    def __init__(self, size: int, patience: float, most: int | None = None) -> None:
        self.size, self.patience = size, patience
        self.most = max(size, most if most is not None else size * 4)
        self._lock = threading.Lock()
        self._watched = threading.Condition(self._lock)  # the watch waits here for a line to form
        self._line: deque[Task] = deque()
        # Each idle thread's own condition, the one idle last on top; a task takes its thread off.
        self._idle: list[threading.Condition] = []
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
                self._idle.pop().notify()
            elif self._count < self.size:
                self._start()
            elif self._watch is None:
                self._watch = threading.Thread(target=self._watching, name="request-threads", daemon=True)
                self._watch.start()
            else:
                self._watched.notify()

    def _start(self) -> None:
        self._count += 1
        threading.Thread(target=self._working, name="request", daemon=True).start()

    def _working(self) -> None:
        woken = threading.Condition(self._lock)
        while True:
            with self._lock:
                while not self._line:
                    if self._count > self.size:
                        self._count -= 1
                        connections_close()  # the thread ends: nothing of it may stay open
                        return
                    self._idle.append(woken)
                    woken.wait()  # the task that wakes it has taken it off the idle ones
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
                    self._watched.wait()
                    continue
                done = self._done
                deadline = time.monotonic() + self.patience
                while (left := deadline - time.monotonic()) > 0:
                    self._watched.wait(left)  # tasks arriving meanwhile do not cut the patience short
                nothing_came_free = self._line and not self._idle and self._done == done
                if nothing_came_free and self._count < self.most:
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


# Threads kept for requests (REQUEST_THREADS, default 8: the synchronous part of a request is CPU, and
# this machine type has 2 cores), how long tasks wait for one before another is started while every one
# is held (REQUEST_THREAD_PATIENCE_MS, default 50), and the most there may be (REQUEST_THREADS_MAX,
# default 32). No request thread waits on a provider (config/deferred_start.py), so a thread held past
# the patience is busy on the CPU, and more threads would only take turns at the interpreter lock: the
# ceiling keeps a burst of thousands of requests to a few dozen threads.
WORKERS = Workers(
    size=max(1, int(os.environ.get("REQUEST_THREADS", "8"))),
    patience=max(1, int(os.environ.get("REQUEST_THREAD_PATIENCE_MS", "50"))) / 1000,
    most=max(1, int(os.environ.get("REQUEST_THREADS_MAX", "32"))),
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
    :data:`WORKERS`, each with a :class:`~config.deferred_start.DeferredStart` in its scope."""

    def __init__(self, application: AsgiApp) -> None:
        self.application = application

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] != "http":
            await self.application(scope, receive, send)
            return
        start = DeferredStart()
        async with ThreadSensitiveContext(executor=RequestThread()):
            await self.application({**scope, SCOPE_KEY: start}, receive, start.sending(send))


class OneCallHandler(ASGIHandler):
    """Django's ASGI handler whose middleware chain and view run as one synchronous call on the
    request's thread (see the module docstring): the chain is loaded as WSGI loads it, and Django's
    synchronous ``get_response`` (the chain, the URL configuration, the log line of a 4xx or 5xx
    answer) is that call. With ``started_in_call``, Django's own ``request_started`` receivers
    (``reset_queries``, ``close_old_connections``) run at the start of that call instead of in a
    thread call of their own before it (:func:`asgi_application`)."""

    def __init__(self, *, started_in_call: bool = False) -> None:
        super().__init__()
        self.started_in_call = started_in_call
        # Built once: asgiref's wrapper keeps nothing of a call, and building it inspects the function.
        self._response_on_thread = sync_to_async(self.response_of, thread_sensitive=True)

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await self._response_on_thread(request)

    def response_of(self, request: HttpRequest) -> HttpResponseBase:
        if self.started_in_call:
            reset_queries()
            close_old_connections()
        return self.get_response(request)


def asgi_application(*, serving: bool = False) -> RequestThreads:
    """The project's ASGI application: Django set up, :class:`OneCallHandler` on :data:`WORKERS`.

    ``serving`` (``config/asgi.py``, the serving process only, since it changes a signal for the whole
    process): Django's ``request_started`` receivers are disconnected and run in each request's one
    call. Django sends the signal on the event loop, and a synchronous receiver costs a request a
    round trip to a thread before the one that serves it (receivers other apps connect keep theirs)."""
    import django

    django.setup(set_prefix=False)
    if serving:
        request_started.disconnect(reset_queries)
        request_started.disconnect(close_old_connections)
    return RequestThreads(OneCallHandler(started_in_call=serving))
