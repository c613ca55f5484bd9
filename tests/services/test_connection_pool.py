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
