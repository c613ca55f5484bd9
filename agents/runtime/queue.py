"""Enqueue the next step of a run once the current transaction commits.

The runtime names the step task rather than importing it: ``agents/tasks.py`` (the Celery interface)
imports the runtime and registers ``run_step_task`` under :data:`RUN_STEP_TASK`, and Celery's registry
resolves the name here, so the import arrow points one way only. The registered task object keeps
``delay_on_commit`` and runs in-process when tasks are eager (the embedded default).
"""

from __future__ import annotations

from config.celery import app

RUN_STEP_TASK = "agents.tasks.run_step_task"


def step_enqueue(*, run_id: str, step_index: int) -> None:
    app.tasks[RUN_STEP_TASK].delay_on_commit(run_id, step_index)
