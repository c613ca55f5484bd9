"""Enqueue the next step of a run once the current transaction commits."""

from __future__ import annotations


def step_enqueue(*, run_id: str, step_index: int) -> None:
    # Imported here: tasks (an interface) import the runtime, not the other way round.
    from agents.tasks import run_step_task

    run_step_task.delay_on_commit(run_id, step_index)
