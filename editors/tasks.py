"""Periodic work of the editors' layer: purging content past its retention (Celery beat, every
``RETENTION_PURGE_INTERVAL_SECONDS``; editors/retention.py)."""

from __future__ import annotations

from celery import shared_task

from editors.retention import retention_purge


@shared_task(name="editors.tasks.purge_expired_task", ignore_result=True)
def purge_expired_task() -> dict[str, int]:
    """Purge every kind past its expiry; rows purged per kind."""
    return {line.kind.name: line.rows for line in retention_purge()}
