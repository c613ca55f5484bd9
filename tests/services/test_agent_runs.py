"""Agent runs on real Celery workers, Redis and PostgreSQL, against the loopback fake provider."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis
from django.conf import settings

from agents.models import AgentRun, AgentStep, RunMessage
from agents.runtime.tool_calls import OUTCOME_UNKNOWN
from agents.services import run_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

INCLUDE = "tests.services.celery_tasks,tests.services.agent_tools"


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def lookup(call_id: str) -> Reply:
    return Reply.tools((call_id, "snippets_by_tag", {"tags": ["tone"]}))


def note(call_id: str) -> Reply:
    return Reply.tools((call_id, "send_note", {"id": call_id}))


def executions(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def start_run(fake) -> AgentRun:
    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    configuration = fake_configuration(fake, max_iterations=10, allowed_tools=["send_note"])
    return run_create(
        configuration=configuration,
        input_text="Draft the weekly note.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )


def assert_completed_once_per_step(run: AgentRun, steps: int) -> None:
    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    indices = list(AgentStep.objects.filter(run=run).order_by("index").values_list("index", flat=True))
    assert indices == list(range(steps))
    assert RunMessage.objects.filter(run=run, role="assistant").count() == steps


def test_tool_calling_run_completes_on_a_worker(fake_provider, tmp_path):
    tool_log = tmp_path / "tools.log"
    fake_provider.script(
        lookup("c0"), lookup("c1"), note("c2"), lookup("c3"), lookup("c4"), Reply(text="Done.")
    )
    env = {"TEST_TOOL_LOG": str(tool_log)}
    with celery_worker("agents", include=INCLUDE, log=tmp_path / "worker.log", env=env):
        run = start_run(fake_provider)
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")
    assert_completed_once_per_step(run, 6)
    assert executions(tool_log) == ["c2"]
    assert len(fake_provider.requests) == 6


def test_run_survives_a_worker_killed_mid_step(fake_provider, tmp_path):
    tool_log = tmp_path / "tools.log"
    fake_provider.script(
        lookup("c0"), lookup("c1"), note("c2"), lookup("c3"), lookup("c4"), Reply(text="Done.")
    )
    env = {"TEST_TOOL_LOG": str(tool_log), "TEST_TOOL_SECONDS": "4"}
    with celery_worker("first", include=INCLUDE, log=tmp_path / "first.log", env=env) as first:
        run = start_run(fake_provider)
        wait_for(lambda: executions(tool_log) == ["c2"], timeout=60, what="the slow tool to start")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    with celery_worker("second", include=INCLUDE, log=tmp_path / "second.log", env=env):
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=90, what="the run to end")
    assert_completed_once_per_step(run, 6)
    assert executions(tool_log) == ["c2"]  # the interrupted write was not replayed
    assert RunMessage.objects.get(run=run, tool_call_id="c2").content == OUTCOME_UNKNOWN
    assert len(fake_provider.requests) == 6  # step 2's recorded model call was not made again
