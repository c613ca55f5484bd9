"""An unexpected exception inside a step ends the run ``failed`` with ``internal_error``: the lease is
released, the run's event says so, and neither the stored message nor the log line carries content."""

from __future__ import annotations

import logging

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError

import agents.runtime.redactions
import agents.runtime.step
from agents.models import AgentRun, AgentStep
from agents.runtime.step import StepAction, step_run
from agents.services import run_create
from gateway.apis.run_output import run_summary_body
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration, run_to_end
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

MARKER = "Quarterly figures for the board"  # content the failing scanner sees, and must never repeat
MESSAGE = "The step failed on an internal error (RuntimeError); the service log has the details."


@pytest.fixture
def failing_scanner(monkeypatch):
    """The redaction scanner raises (a defect) on any text holding ``MARKER``, quoting that text in its
    exception message as careless code would."""
    scan = agents.runtime.redactions.redact

    def raising(value: str):
        if MARKER in value:
            raise RuntimeError(f"scanner broke on {value!r}")
        return scan(value)

    monkeypatch.setattr(agents.runtime.redactions, "redact", raising)


def test_an_exception_in_the_reply_scanner_ends_the_run_with_internal_error(
    fake_provider, failing_scanner, django_capture_on_commit_callbacks, caplog
):
    fake_provider.script(Reply(text=f"{MARKER}: revenue up."))
    with caplog.at_level(logging.ERROR, logger="agents.runtime.step"):
        run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))
    assert (run.status, run.termination_reason) == ("failed", "internal_error")
    assert (run.error_code, run.error_message) == ("internal_error", MESSAGE)
    assert (run.lease_owner, run.lease_expires_at) == ("", None)
    assert run.finished_at is not None
    # The run's event (the terminal ``run`` event of its stream) names the error, without content.
    assert run_summary_body(run)["error"] == {"code": "internal_error", "message": MESSAGE}
    assert not AgentStep.objects.filter(run=run).exists()  # nothing of the failed step was half-stored
    assert len(fake_provider.requests) == 1
    [record] = [r for r in caplog.records if r.name == "agents.runtime.step"]
    assert record.getMessage().startswith(f"step 0 of run {run.id} raised RuntimeError")
    assert "Traceback (message withheld):" in record.getMessage()
    assert "in raising" in record.getMessage()  # the frames are there
    assert record.exc_info is None
    assert MARKER not in caplog.text
    assert "scanner broke on '" not in caplog.text  # the source line of the raise, never its message


def test_a_step_that_raised_is_not_run_again(fake_provider, failing_scanner):
    fake_provider.script(Reply(text=f"{MARKER}: revenue up."))
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")
    assert (outcome.action, outcome.reason) == (StepAction.FINISHED, "internal_error")
    # A redelivery of the same message finds the run ended: no second model call.
    again = step_run(run_id=str(run.id), step_index=0, worker="w2")
    assert again.action == StepAction.SKIPPED
    assert len(fake_provider.requests) == 1
    assert AgentRun.objects.get(id=run.id).status == "failed"


@pytest.mark.parametrize("error", [OperationalError("connection lost"), SoftTimeLimitExceeded()])
def test_errors_a_retry_can_cure_are_left_to_the_task(fake_provider, monkeypatch, error):
    """A dropped connection is retried by the task; a soft time limit leaves the lease to expire and
    the reaper to requeue. Neither ends the run."""

    def raising(value: str):
        raise error

    fake_provider.script(Reply(text="Fine."))
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    monkeypatch.setattr(agents.runtime.redactions, "redact", raising)
    with pytest.raises(type(error)):
        step_run(run_id=str(run.id), step_index=0, worker="w1")
    run.refresh_from_db()
    assert (run.status, run.error_code, run.lease_owner) == ("running", "", "w1")


def test_a_scanner_that_raises_on_everything_still_lets_the_run_end(fake_provider, monkeypatch):
    fake_provider.script(Reply(text="Fine."))
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )

    def raising(value: str):
        raise RuntimeError("broken")

    monkeypatch.setattr(agents.runtime.redactions, "redact", raising)
    monkeypatch.setattr(agents.runtime.step, "redact", raising)
    outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")
    assert (outcome.action, outcome.reason) == (StepAction.FINISHED, "internal_error")
    run.refresh_from_db()
    assert (run.status, run.error_code, run.error_message, run.lease_owner) == (
        "failed",
        "internal_error",
        MESSAGE,
        "",
    )
