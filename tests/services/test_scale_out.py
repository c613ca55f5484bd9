"""Scale-out: two worker processes with different node names share one broker and one database; one is
killed mid-batch, and every run still completes with each of its steps recorded once, within
``RECOVERY_SECONDS`` of the kill: the killed worker's step resumes once its lease (20 s by default,
renewed while a step runs) runs out, not after a whole step's worth of time. On Redis and on
RabbitMQ; the measured recovery is printed (run with ``-s`` to see it)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from agents.models import AgentRun, AgentStep, RunMessage
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.brokers import runs_published
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

RUNS = 12
# The default lease (AGENT_STEP_LEASE_SECONDS, 20 s) plus the step itself and the broker's redelivery.
RECOVERY_SECONDS = 30


def ended(ids: list[str]) -> int:
    return AgentRun.objects.filter(id__in=ids, status__in=["completed", "failed", "cancelled"]).count()


def steps_run(log: Path) -> int:
    return log.read_text().count("agents.tasks.run_step_task[") if log.exists() else 0


def test_two_workers_share_a_batch_and_a_worker_killed_mid_batch_loses_no_run(
    broker, fake_provider, tmp_path
):
    fake_provider.default_reply = Reply(text="Done.", latency=1.0)
    configuration = fake_configuration(fake_provider, allowed_tool_groups=[])
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    with (
        celery_worker("first", log=first_log, env=broker.env) as first,
        celery_worker("second", log=second_log, env=broker.env),
    ):
        ids = runs_published(broker, configuration=configuration.identifier, count=RUNS)
        wait_for(lambda: ended(ids) >= 4, timeout=60, what="a third of the batch to end")
        os.killpg(first.pid, signal.SIGKILL)
        killed = time.monotonic()
        first.wait(timeout=10)
        killed_at = ended(ids)
        in_flight = list(AgentRun.objects.filter(id__in=ids, status="running").exclude(lease_owner=""))
        wait_for(lambda: ended(ids) == RUNS, timeout=120, what="every run to end after the kill")
        recovery = time.monotonic() - killed

    print(
        f"\n{broker.name}: every run completed {recovery:.1f} s after a worker was killed "
        f"({RUNS - killed_at} runs left at the kill, {len(in_flight)} of them leased)"
    )
    assert killed_at < RUNS  # the kill came mid-batch
    assert recovery < RECOVERY_SECONDS
    assert "first@" in first_log.read_text() and "second@" in second_log.read_text()
    assert steps_run(first_log) > 0 and steps_run(second_log) > 0  # both took part
    runs = AgentRun.objects.filter(id__in=ids)
    assert set(runs.values_list("status", "termination_reason")) == {("completed", "completed")}
    assert sorted(AgentStep.objects.filter(run__in=runs).values_list("run_id", "index")) == sorted(
        (run.id, 0) for run in runs
    )
    assert RunMessage.objects.filter(run__in=runs, role="assistant").count() == RUNS
    # The killed worker's step may have reached the provider before it died: at most once more.
    assert RUNS <= len(fake_provider.requests) <= RUNS + 1
