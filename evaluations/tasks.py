"""Celery tasks of evaluations: a thin wrapper taking an id and calling the evaluation service."""

from __future__ import annotations

from celery import shared_task

from evaluations.services import EVALUATION_TASK, evaluation_run


@shared_task(name=EVALUATION_TASK, acks_late=True, reject_on_worker_lost=True)
def evaluation_run_task(evaluation_id: int) -> str:
    """Run one evaluation (claimed once: a redelivered task finds it claimed and does nothing)."""
    return evaluation_run(evaluation_id=evaluation_id).status
