"""Celery tasks: thin wrappers taking ids and calling the runtime (CONVENTIONS.md §4)."""

from __future__ import annotations

import os
import socket

from celery import shared_task

from agents.runtime.leases import runs_reap
from agents.runtime.queue import step_enqueue
from agents.runtime.step import LeaseBusy, step_run


def _worker_id(task_id: str | None) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{task_id or 'eager'}"


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_step_task(self, run_id: str, step_index: int) -> str:
    try:
        outcome = step_run(run_id=run_id, step_index=step_index, worker=_worker_id(self.request.id))
    except LeaseBusy as busy:
        # Another worker holds the step; come back when its lease would have expired.
        raise self.retry(countdown=busy.retry_in) from None
    return outcome.action


@shared_task(acks_late=True)
def reap_runs_task() -> dict[str, int]:
    result = runs_reap()
    for run_id, step_index in result.requeued:
        step_enqueue(run_id=run_id, step_index=step_index)
    return {"requeued": len(result.requeued), "failed": len(result.failed)}
