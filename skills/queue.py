"""Enqueue a skill source sync once the current transaction commits (in-process when tasks are eager).

The services name the sync task rather than importing it: ``skills/tasks.py`` imports the services and
registers ``sync_skill_source_task`` under :data:`SYNC_SKILL_SOURCE_TASK`, and Celery's registry
resolves the name here, so the import arrow points one way only.
"""

from __future__ import annotations

from config.celery import app

SYNC_SKILL_SOURCE_TASK = "skills.tasks.sync_skill_source_task"


def sync_enqueue(*, source_id: int) -> None:
    app.tasks[SYNC_SKILL_SOURCE_TASK].delay_on_commit(source_id)
