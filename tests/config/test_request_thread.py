"""The threads requests share under ASGI (config/request_thread.py): a call never waits forever behind
calls that hold every thread, the extra threads end when nothing waits, and a request's calls run one
at a time through its executor with their results and errors."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from config.request_thread import RequestThread, Workers


def wait_until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


def test_a_call_behind_calls_that_hold_every_thread_gets_one_more():
    workers = Workers(size=1, patience=0.01)
    held, release, ran = threading.Event(), threading.Event(), threading.Event()

    def holding() -> None:
        held.set()
        release.wait(30)

    def second() -> None:
        threads_then.append(workers.threads)
        ran.set()

    threads_then: list[int] = []
    workers.run(holding)
    assert held.wait(10)
    workers.run(second)
    try:
        # The only kept thread is still held: the second call ran on a thread started for it.
        assert ran.wait(10)
        assert not release.is_set()
        assert threads_then == [2]
    finally:
        release.set()
    wait_until(lambda: workers.threads == 1, "the extra thread to end once nothing waits")


def test_threads_are_added_up_to_the_ceiling_then_calls_wait_their_turn():
    workers = Workers(size=1, patience=0.01, most=2)
    release = threading.Event()
    started: list[int] = []
    lock = threading.Lock()

    def holding(n: int) -> None:
        with lock:
            started.append(n)
        release.wait(30)

    try:
        for n in range(4):
            workers.run(lambda n=n: holding(n))
        wait_until(lambda: len(started) == 2, "two calls to run on the two threads allowed")
        time.sleep(0.2)  # many times the patience: no third thread is started
        assert workers.threads == 2
        assert sorted(started) == [0, 1]
    finally:
        release.set()
    wait_until(lambda: len(started) == 4, "the waiting calls to run once threads came free")
    wait_until(lambda: workers.threads == 1, "the extra thread to end once nothing waits")


def test_a_call_runs_on_the_thread_that_came_free_last():
    # Its stack and its allocator's arena are the warmest; the one idle longest is woken last.
    workers = Workers(size=2, patience=10)
    first_free, second_free = threading.Event(), threading.Event()
    threads: dict[str, int] = {}

    def holding(name: str, release: threading.Event) -> None:
        threads[name] = threading.get_ident()
        release.wait(30)

    def recorded(name: str) -> None:
        threads[name] = threading.get_ident()

    workers.run(lambda: holding("first", first_free))
    workers.run(lambda: holding("second", second_free))
    wait_until(lambda: len(threads) == 2, "both calls to run, each on a thread of its own")
    first_free.set()
    wait_until(lambda: len(workers._idle) == 1, "the first thread to wait for a call")
    second_free.set()
    wait_until(lambda: len(workers._idle) == 2, "the second thread to wait for a call")
    for name in ("third", "fourth"):
        workers.run(lambda name=name: recorded(name))
        wait_until(lambda name=name: name in threads, f"the {name} call to run")
        wait_until(lambda: len(workers._idle) == 2, "both threads to wait for a call again")
    assert threads["first"] != threads["second"]
    assert threads["third"] == threads["fourth"] == threads["second"]


def test_a_request_thread_runs_calls_with_their_results_and_errors():
    executor = RequestThread(Workers(size=2, patience=0.05))
    names = [executor.submit(lambda: threading.current_thread().name).result(10) for _ in range(3)]
    assert all(name.startswith("request") for name in names)
    assert executor.submit(lambda a, b=0: a + b, 2, b=3).result(10) == 5
    with pytest.raises(ValueError, match="refused"):
        executor.submit(_refuse).result(10)


def _refuse() -> None:
    raise ValueError("refused")


@pytest.mark.django_db
@pytest.mark.parametrize(("max_age", "closed"), [(0, ["default"]), (60, [])])
def test_a_task_gives_its_connection_back_as_the_end_of_a_request_does(monkeypatch, max_age, closed):
    # A SQLite connection stays with the thread for its next task while CONN_MAX_AGE allows, instead
    # of reading the schema again for every call. (A PostgreSQL one is always closed: the services
    # suite counts the backends a waiting stream holds, tests/services/test_openai_asgi.py.)
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", max_age)
    wrapper_class = type(connections["default"])
    original_close = wrapper_class.close
    closes: list[str] = []

    def recording_close(self) -> None:
        if threading.current_thread().name.startswith("request"):
            closes.append(self.alias)
        original_close(self)

    monkeypatch.setattr(wrapper_class, "close", recording_close)
    workers = Workers(size=1, patience=0.05)
    RequestThread(workers).submit(lambda: connections["default"].ensure_connection()).result(10)
    wait_until(lambda: workers._done == 1, "the task's connections to be given back")
    assert closes == closed


def _loop_round_trips_of_one_request(application, monkeypatch) -> tuple[int, int]:
    """How many times a GET of the models list stepped from its request thread back to the event loop
    (asgiref's ``AsyncToSync``), and the answer's status."""
    from asgiref.sync import AsyncToSync

    calls = []
    original = AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        calls.append(self.awaitable)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncToSync, "__call__", counted)
    status = _get_models(application)
    return len(calls), status


def _thread_calls_of_one_request(application, monkeypatch) -> tuple[int, int]:
    """How many calls a GET of the models list made on the request threads, and its status."""
    calls = []
    original = RequestThread.submit

    def counted(self, fn, /, *args, **kwargs):
        calls.append(fn)
        return original(self, fn, *args, **kwargs)

    monkeypatch.setattr(RequestThread, "submit", counted)
    status = _get_models(application)
    return len(calls), status


def _get_models(application) -> int:
    import asyncio

    from asgiref.testing import ApplicationCommunicator

    from tests.asgi import http_scope

    async def get() -> int:
        communicator = ApplicationCommunicator(application, http_scope("GET", "/api/openai/v1/models"))
        await communicator.send_input({"type": "http.request", "body": b""})
        start = await communicator.receive_output(timeout=10)
        while (await communicator.receive_output(timeout=10)).get("more_body"):
            pass
        await communicator.wait(timeout=10)
        return int(start["status"])

    return asyncio.run(get())


@pytest.mark.django_db(transaction=True)
def test_the_chain_and_the_view_run_as_one_call_without_stepping_back_to_the_loop(monkeypatch):
    from django.core.asgi import get_asgi_application

    from config.request_thread import RequestThreads, asgi_application

    assert _loop_round_trips_of_one_request(asgi_application(), monkeypatch) == (0, 401)
    # Django's own handler runs the synchronous chain from the loop: its innermost step goes back.
    bounced, status = _loop_round_trips_of_one_request(RequestThreads(get_asgi_application()), monkeypatch)
    assert (bounced, status) == (1, 401)


@pytest.mark.django_db(transaction=True)
def test_the_serving_process_runs_djangos_request_started_receivers_in_the_requests_one_call(monkeypatch):
    from django.core.signals import request_started
    from django.db import close_old_connections, reset_queries

    from config.request_thread import asgi_application

    # request_started's receivers, the chain with the view, the response's close.
    assert _thread_calls_of_one_request(asgi_application(), monkeypatch) == (3, 401)
    try:
        serving = asgi_application(serving=True)
        receivers = [receiver() for _, receiver in request_started.receivers]
        assert reset_queries not in receivers and close_old_connections not in receivers
        started = []
        monkeypatch.setattr("config.request_thread.reset_queries", lambda: started.append("reset_queries"))
        monkeypatch.setattr(
            "config.request_thread.close_old_connections", lambda: started.append("close_old_connections")
        )
        assert _thread_calls_of_one_request(serving, monkeypatch) == (2, 401)
        assert started == ["reset_queries", "close_old_connections"]
    finally:
        request_started.connect(reset_queries)
        request_started.connect(close_old_connections)
