"""The PostgreSQL pool and slow providers: a step holds no database connection while it waits on
the provider, so a worker's connections are bounded by the pool, not by the steps in flight."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection, connections

from agents.models import AgentRun, AgentStep
from agents.runtime.step import StepAction, step_run
from agents.services import run_create
from config.database import connections_release
from config.db.pool import check_or_sweep
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import FakeProvider, Reply
from tests.services import worker

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

PROBE_APPLICATION = "govctx-pool-probe"


class BlockingProvider(FakeProvider):
    """Answers each request only once the test lets it go; says when a request is waiting."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arrived = threading.Event()
        self.proceed = threading.Event()

    def _next_reply(self):  # type: ignore[no-untyped-def]
        reply = super()._next_reply()
        self.arrived.set()
        self.proceed.wait(timeout=30)
        return reply


@pytest.fixture
def blocking_provider() -> Iterator[BlockingProvider]:
    with BlockingProvider(default_reply=Reply(text="Done.")) as fake:
        yield fake
        fake.proceed.set()


def pool_checked_out() -> int:
    stats = connection.pool.get_stats()
    return int(stats["pool_size"] - stats["pool_available"])


def busy_backends() -> list[tuple[int, str]]:
    """Backends of the test database that are inside a query or a transaction (the probe excepted)."""
    dsn = worker.test_database_url().replace("postgres://", "postgresql://", 1)
    with psycopg.connect(dsn, application_name=PROBE_APPLICATION, autocommit=True) as probe:
        rows = probe.execute(
            "SELECT pid, state FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction', "
            "'idle in transaction (aborted)')"
        ).fetchall()
    return [(int(pid), str(state)) for pid, state in rows]


def run_step_in_thread(run: AgentRun, seen: dict[str, Any]) -> threading.Thread:
    def target() -> None:
        try:
            seen["wrapper"] = connections["default"]
            seen["outcome"] = step_run(run_id=str(run.id), step_index=0, worker="pool-test")
        except BaseException as exc:  # reported by the test, never swallowed
            seen["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=target, name="step")
    thread.start()
    return thread


def test_a_step_holds_no_connection_while_the_provider_is_answering(
    blocking_provider, django_capture_on_commit_callbacks
):
    assert connection.settings_dict["OPTIONS"]["pool"], "the services settings use the pool"
    configuration = fake_configuration(blocking_provider)
    with django_capture_on_commit_callbacks(execute=False):
        run = _run(configuration)
    connection.close()  # this thread's connection back to the pool: only the step's is counted below
    seen: dict[str, Any] = {}
    thread = run_step_in_thread(run, seen)
    try:
        assert blocking_provider.arrived.wait(timeout=30), seen.get("error")
        # The claim, the transcript and the governance events were read and written through the pool
        # before the call; now the step thread holds nothing.
        assert seen["wrapper"].connection is None
        assert pool_checked_out() == 0
        assert busy_backends() == []
        # The control: a thread that holds a connection is counted by the same measure.
        assert AgentRun.objects.filter(id=run.id).exists()
        assert pool_checked_out() == 1
        connection.close()
    finally:
        blocking_provider.proceed.set()
        thread.join(timeout=30)
    assert "error" not in seen, seen.get("error")
    assert seen["outcome"].action == StepAction.FINISHED
    step = AgentStep.objects.get(run=run, index=0)
    assert step.status == "completed"
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert len(blocking_provider.requests) == 1
    connection.close()
    assert pool_checked_out() == 0


def _run(configuration: Any) -> AgentRun:
    return run_create(
        configuration=configuration, input_text="Draft a note.", input_data_class=DataClass.PUBLIC_CONTENT
    )


WIDTH = 8  # connections the pool holds idle when every other backend is killed
THREADS = 2  # fewer threads than dead connections: each would meet several of them in turn
ROUNDS = 4  # connections each thread takes from the pool afterwards, one after another


def run_in_threads(count: int, work: Any) -> tuple[list[Any], list[BaseException]]:
    """Run ``work(index)`` on ``count`` threads at once; their results and errors, each thread's
    connection given back to the pool at the end."""
    results: list[Any] = []
    errors: list[BaseException] = []

    def target(index: int) -> None:
        try:
            results.append(work(index))
        except BaseException as exc:  # reported by the test, never swallowed
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=target, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results, errors


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def test_the_pool_replaces_every_dead_idle_connection_at_the_first_failed_check():
    pool = connection.pool
    assert pool._check is check_or_sweep  # the option reached the pool (psycopg_pool keeps it so)
    connection.close()
    # Grow the pool: WIDTH threads each hold a connection at the same moment, then give it back.
    together = threading.Barrier(WIDTH)

    def hold(_: int) -> int:
        pid = backend_pid()
        together.wait(timeout=30)
        return pid

    grown, errors = run_in_threads(WIDTH, hold)
    assert errors == []
    assert len(set(grown)) == WIDTH
    idle = pool.get_stats()["pool_available"]
    assert idle >= WIDTH
    assert pool.get_stats()["pool_size"] == idle  # nothing checked out
    # A failover: every backend of the database dies, the pool's idle connections with them.
    dsn = worker.test_database_url().replace("postgres://", "postgresql://", 1)
    with psycopg.connect(dsn, application_name=PROBE_APPLICATION, autocommit=True) as probe:
        killed = {
            int(pid)
            for pid, terminated in probe.execute(
                "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
            if terminated
        }
    assert set(grown) <= killed
    pool.pop_stats()  # the counters below count from here
    # A short wait for a connection: meeting the dead ones one by one (psycopg backs off 1 s, then
    # 2 s, … between failed checks) runs out of it and raises PoolTimeout.
    timeout, pool.timeout = pool.timeout, 3.0
    try:

        def take_in_turn(_: int) -> list[int]:
            pids = []
            for _round in range(ROUNDS):
                pids.append(backend_pid())
                connections_release(waiting_for="the next round")
            return pids

        rounds, errors = run_in_threads(THREADS, take_in_turn)
    finally:
        pool.timeout = timeout
    assert errors == []
    served = [pid for pids in rounds for pid in pids]
    assert len(served) == THREADS * ROUNDS
    assert killed.isdisjoint(served)  # every connection handed out was a new one
    stats = pool.get_stats()
    assert stats["connections_lost"] == idle  # each dead idle connection was dropped, once
    assert stats.get("requests_errors", 0) == 0
