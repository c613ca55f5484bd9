"""The embedded default has no Celery beat: a serving process runs the reaper in a thread that sweeps
as it starts and on a timer. Only a server starts it, and only in the embedded default."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

import agents.reaper
import governance.chain.embedded
from agents.health import reaper_last_tick
from agents.models import AgentRun
from agents.reaper import EmbeddedReaper
from agents.services import run_create
from config.startup import serving_started
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def lost_run(configuration, capture) -> AgentRun:
    """A run whose first message was lost (its on-commit enqueue is dropped), waiting past the bound."""
    with capture(execute=False):
        run = run_create(
            configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
        )
    stale = timezone.now() - timedelta(seconds=settings.AGENT_QUEUED_STALE_SECONDS + 1)
    AgentRun.objects.filter(id=run.id).update(updated_at=stale)
    return run


def status(run: AgentRun) -> str:
    return AgentRun.objects.get(id=run.id).status


def reaper_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "embedded-reaper"]


@pytest.fixture
def no_reaper(monkeypatch):
    """No reaper (nor governance log anchorer) started in this process yet; any the test starts is
    stopped after it."""
    cache.clear()
    monkeypatch.setattr(agents.reaper, "_started", [])
    monkeypatch.setattr(governance.chain.embedded, "_started", [])
    yield
    for thread in [*agents.reaper._started, *governance.chain.embedded._started]:
        thread.stop()
        thread.join(timeout=30)
    cache.clear()


def test_the_reaper_thread_sweeps_as_it_starts_and_then_on_its_timer(
    fake_provider, django_capture_on_commit_callbacks, client
):
    fake_provider.script(Reply(text="First."), Reply(text="Second."))
    configuration = fake_configuration(fake_provider)
    first = lost_run(configuration, django_capture_on_commit_callbacks)
    reaper = EmbeddedReaper(interval=0.2)
    reaper.start()
    try:
        wait_for(lambda: status(first) == "completed", timeout=30, what="the sweep at start-up")
        second = lost_run(configuration, django_capture_on_commit_callbacks)
        wait_for(lambda: status(second) == "completed", timeout=30, what="a sweep on the timer")
        # The sweep records its tick after the step it sent has run: wait for the sweep to end.
        wait_for(lambda: reaper_last_tick() is not None, timeout=30, what="the sweep's tick")
    finally:
        reaper.stop()
        reaper.join(timeout=30)
    assert not reaper.is_alive()
    assert len(fake_provider.requests) == 2
    # /healthz shows the embedded ticks without failing on them.
    reaper_check = client.get("/healthz").json()["checks"]["reaper"]
    assert reaper_check["status"] == "not_applicable"
    assert reaper_check["last_tick"] <= timezone.now().isoformat()


def test_a_sweep_that_raises_does_not_stop_the_thread(fake_provider, monkeypatch):
    sweeps: list[int] = []

    def failing_sweep():
        sweeps.append(1)
        raise RuntimeError("database is locked")

    monkeypatch.setattr(agents.reaper, "reap_sweep", failing_sweep)
    reaper = EmbeddedReaper(interval=0.05)
    reaper.start()
    try:
        wait_for(lambda: len(sweeps) >= 3, timeout=30, what="three sweeps")
    finally:
        reaper.stop()
        reaper.join(timeout=30)


def test_serving_starts_one_reaper_in_the_embedded_default(no_reaper):
    assert reaper_threads() == []  # importing the apps (AppConfig.ready) started none
    serving_started()
    serving_started()  # a second server module in the same process (WSGI and ASGI) adds none
    assert len(reaper_threads()) == 1
    assert agents.reaper._started[0].interval == settings.AGENT_REAPER_INTERVAL_SECONDS


def test_serving_starts_no_reaper_in_the_real_mode(no_reaper, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # Celery beat reaps
    serving_started()
    assert reaper_threads() == []
    assert agents.reaper._started == []


def test_healthz_stays_not_applicable_before_the_first_embedded_tick(no_reaper, client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["reaper"] == {"status": "not_applicable"}
