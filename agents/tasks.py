"""Celery tasks: thin wrappers taking ids and calling the runtime.

The runtime enqueues a step by the task's registered name (:data:`agents.runtime.queue.RUN_STEP_TASK`),
so this module imports the runtime and never the reverse. ``AgentsConfig.ready`` imports it so the
tasks are registered in every process, not only in workers (which discover them on their own).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from celery import Task, shared_task
from celery.signals import beat_init
from django.db import InterfaceError, OperationalError, close_old_connections

from agents.reaper import reap_sweep
from agents.runtime.queue import RUN_STEP_TASK
from agents.runtime.step import LeaseBusy, step_run
from agents.telemetry import step_log_context_connect, step_observed, step_traced

# A dropped database connection (a restart, a failover, a killed backend) is retried on a fresh one.
DATABASE_RETRY_SECONDS = 1
DATABASE_MAX_RETRIES = 5


def _worker_id(task_id: str | None) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{task_id or 'eager'}"


@shared_task(name=RUN_STEP_TASK, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
@step_traced
def run_step_task(self: Task, run_id: str, step_index: int) -> str:
    try:
        outcome = step_run(run_id=run_id, step_index=step_index, worker=_worker_id(self.request.id))
    except LeaseBusy as busy:
        # Another worker holds the step; come back when its lease would have expired.
        raise self.retry(countdown=busy.retry_in) from None
    except (OperationalError, InterfaceError):
        # Every record of a step is one transaction, so nothing was half-written: drop the broken
        # connection and run the step again (under the same task id, so the same lease owner). A model
        # call whose result was not recorded is made again, as after a worker crash.
        close_old_connections()
        raise self.retry(countdown=DATABASE_RETRY_SECONDS, max_retries=DATABASE_MAX_RETRIES) from None
    step_observed(action=outcome.action, reason=outcome.reason)
    return outcome.action


step_log_context_connect(RUN_STEP_TASK)


@shared_task(acks_late=True)
def reap_runs_task() -> dict[str, int]:
    result = reap_sweep()
    return {"requeued": len(result.requeued), "failed": len(result.failed)}


@beat_init.connect
def _reap_when_the_scheduler_starts(sender: Any, **kwargs: Any) -> None:
    """Beat first runs an interval task one interval after it starts; reaping at once gives
    ``/healthz`` the reaper's tick within seconds of a deployment rather than an interval later."""
    reap_runs_task.delay()
