"""Celery tasks of the skills app: thin, by id, calling one service.

The services enqueue by the task's registered name (:data:`skills.queue.SYNC_SKILL_SOURCE_TASK`), so
this module imports the services and never the reverse; ``SkillsConfig.ready`` imports it so the task
is registered in every process.
"""

from __future__ import annotations

import logging

from celery import shared_task

from config.errors import ApplicationError
from governance.actors import Actor
from skills.queue import SYNC_SKILL_SOURCE_TASK
from skills.services import skill_source_sync

logger = logging.getLogger(__name__)


@shared_task(name=SYNC_SKILL_SOURCE_TASK, acks_late=True, reject_on_worker_lost=True)
def sync_skill_source_task(source_id: int) -> dict[str, object]:
    """Sync one source. A typed failure is already recorded on the source (status and message), so it
    is reported in the return value instead of failing the task (a retry would not change the outcome)."""
    try:
        result = skill_source_sync(source_id=source_id, actor=Actor.system("task:sync_skill_source"))
    except ApplicationError as exc:
        logger.warning("skill source %s: %s", source_id, exc.code)
        return {"source_id": source_id, "status": "error", "code": exc.code}
    return {"source_id": source_id, "status": result.status, "created": len(result.created)}
