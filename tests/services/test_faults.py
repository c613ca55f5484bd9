"""Infrastructure faults under a real worker: the broker restarts mid-run, the database drops the
worker's connection mid-step. Runs resume or fail cleanly; nothing is recorded twice or half-written."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

from agents.models import AgentRun, AgentStep, RunMessage
from agents.tasks import run_step_task
from config.celery import app as celery_app
from tests.fakes.provider_server import Reply
from tests.services.test_agent_runs import INCLUDE, lookup, start_run
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """A throw-away Redis on its own port, without persistence: a restart loses everything it held."""

    def __init__(self, port: int, log: Path) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            pytest.skip("redis-server is not installed")
        self.command = [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        self.command += ["--appendonly", "no", "--daemonize", "no"]
        self.client = redis.Redis(port=port, socket_connect_timeout=0.2)
        self.log = log
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("a") as output:
            self.process = subprocess.Popen(self.command, stdout=output, stderr=subprocess.STDOUT)
        wait_for(self._pings, timeout=10, what="redis-server to answer")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def restart(self) -> None:
        """Stop the server and start an empty one on the same port (a different ``run_id``)."""
        before = self.client.info("server")["run_id"]
        self.stop()
        self.start()
        assert self.client.info("server")["run_id"] != before
        # Nothing of the old server is left: no message, no unacknowledged delivery. A worker that
        # reconnects at once may already have declared its queues again (kombu's binding sets).
        left = sorted(key.decode() for key in self.client.scan_iter())
        assert all(key.startswith("_kombu.binding.") for key in left), left

    def _pings(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.ConnectionError:
            return False


@contextmanager
def redis_server(port: int, log: Path) -> Iterator[RedisServer]:
    server = RedisServer(port, log)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def slow_lookup(call_id: str) -> Reply:
    """A tool call the provider takes 2 s to answer: the fault is injected while the step waits."""
    return replace(lookup(call_id), latency=2.0)


def assert_consistent(run: AgentRun) -> list[int]:
    """Steps contiguous from 0, one assistant message per completed step, tool results only for calls
    the model made (and at most one each). Returns the step indices."""
    indices = list(AgentStep.objects.filter(run=run).order_by("index").values_list("index", flat=True))
    assert indices == list(range(len(indices)))
    completed = list(AgentStep.objects.filter(run=run, status="completed").values_list("index", flat=True))
    assistants = list(
        RunMessage.objects.filter(run=run, role="assistant").values_list("step_index", flat=True)
    )
    assert sorted(assistants) == completed
    calls = {
        call["id"]
        for message in RunMessage.objects.filter(run=run, role="assistant")
        for call in message.tool_calls
    }
    results = list(RunMessage.objects.filter(run=run, role="tool").values_list("tool_call_id", flat=True))
    assert set(results) <= calls
    assert len(results) == len(set(results))
    return indices


def test_run_resumes_after_the_broker_restarts_mid_step(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    port = free_port()
    broker = f"redis://127.0.0.1:{port}/0"
    fake_provider.script(
        lookup("c0"), slow_lookup("c1"), lookup("c2"), slow_lookup("c3"), Reply(text="Done.")
    )
    worker = celery_worker("broker", include=INCLUDE, log=tmp_path / "worker.log", env={"REDIS_URL": broker})
    with redis_server(port, tmp_path / "redis.log") as server, worker:
        with django_capture_on_commit_callbacks(execute=False):  # enqueue on our own broker instead
            run = start_run(fake_provider)
        with celery_app.connection_for_write(broker) as producer_connection:
            run_step_task.apply_async((str(run.id), 0), connection=producer_connection)
        for held in (2, 4):  # restart while step 1, then step 3, waits on the provider
            wait_for(lambda n=held: len(fake_provider.requests) == n, timeout=60, what=f"model call {held}")
            server.restart()
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=90, what="the run to end")
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert assert_consistent(run) == [0, 1, 2, 3, 4]
    assert len(fake_provider.requests) == 5  # no step's model call was made twice


def test_database_connection_dropped_mid_step_is_retried_without_half_writes(fake_provider, tmp_path):
    # Without the pool the step holds its connection through the provider call, so the drop breaks it
    # (with the pool it holds none then: the next test).
    fake_provider.script(slow_lookup("c0"), lookup("c0"), Reply(text="Done."))
    env = {"DATABASE_POOL": "false"}
    with celery_worker("database", include=INCLUDE, log=tmp_path / "worker.log", env=env):
        run = start_run(fake_provider)
        wait_for(lambda: len(fake_provider.requests) == 1, timeout=60, what="the first model call")
        terminated = terminate_other_backends()
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")
    assert terminated >= 1
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert assert_consistent(run) == [0, 1]
    assert len(fake_provider.requests) == 3  # step 0's unrecorded call was made again, nothing else


def terminate_other_backends() -> int:
    """Kill every other connection to the test database (the worker's), as a failover would.

    The idle connections of this test process's own pool die too, and are left for the pool to find:
    its first failed check replaces them all (config/db/pool.py,
    tests/services/test_connection_pool.py)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])


def test_database_connections_dropped_while_a_step_waits_on_the_provider_cost_nothing(
    fake_provider, tmp_path
):
    # With the pool the step gave its connection back before the call; the pool replaces the dropped
    # ones before handing them out again (CONN_HEALTH_CHECKS), so the step records its reply at once.
    fake_provider.script(slow_lookup("c0"), Reply(text="Done."))
    with celery_worker("database", include=INCLUDE, log=tmp_path / "worker.log"):
        run = start_run(fake_provider)
        wait_for(lambda: len(fake_provider.requests) == 1, timeout=60, what="the first model call")
        terminated = terminate_other_backends()
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")
    assert terminated >= 1
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert assert_consistent(run) == [0, 1]
    assert len(fake_provider.requests) == 2  # no model call was made again
