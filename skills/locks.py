"""One sync per source at a time. A second sync while the lock is held is refused, never queued.

- With ``REDIS_URL`` set: a Redis lock (``SET NX`` with an expiry, released only by its holder), so
  workers on several hosts agree.
- Without Redis (the embedded default): a claim on the source row, taken in a short transaction under
  ``select_for_update(nowait=True)`` (PostgreSQL refuses a concurrent claimer at once; SQLite serialises
  writers itself) and committed, so every connection sees ``syncing`` while the network fetch runs
  outside any transaction. A claim older than :data:`STALE_AFTER_SECONDS` (a crashed worker) may be taken over.

Both record ``syncing`` on the source for the admin; the final status write releases the row claim.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import redis
from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from skills.errors import SkillSyncInProgress
from skills.ingest.snapshot import MAX_SECONDS_PER_SYNC
from skills.models import SkillSource, SyncStatus

STALE_AFTER_SECONDS = int(MAX_SECONDS_PER_SYNC) + 60


@dataclass(frozen=True)
class SyncClaim:
    source_id: int
    token: str
    redis_lock: Any = None

    def held(self) -> bool:
        """Whether this claim still holds the lock (checked again before the results are committed)."""
        if self.redis_lock is not None:
            return bool(self.redis_lock.owned())
        return SkillSource.objects.filter(pk=self.source_id, sync_lock_token=self.token).exists()


@contextmanager
def source_sync_lock(source_id: int) -> Iterator[SyncClaim]:
    """Hold the sync lock of a source for the block. Raises :class:`SkillSyncInProgress` when taken."""
    if settings.REDIS_URL:
        with _redis_lock(source_id, settings.REDIS_URL) as claim:
            yield claim
        return
    claim = _claim_row(source_id)
    try:
        yield claim
    finally:
        _release_row(claim)


@contextmanager
def _redis_lock(source_id: int, redis_url: str) -> Iterator[SyncClaim]:
    client = redis.Redis.from_url(redis_url)
    lock = client.lock(f"skills:source-sync:{source_id}", timeout=STALE_AFTER_SECONDS, blocking=False)
    if not lock.acquire():
        raise SkillSyncInProgress(f"Skill source {source_id} is already being synced.")
    token = uuid.uuid4().hex
    try:
        SkillSource.objects.filter(pk=source_id).update(
            sync_status=SyncStatus.SYNCING, sync_started_at=timezone.now(), sync_lock_token=token
        )
        yield SyncClaim(source_id=source_id, token=token, redis_lock=lock)
    finally:
        _release_row(SyncClaim(source_id=source_id, token=token))
        # Expired meanwhile: there is nothing left to release.
        with contextlib.suppress(redis.exceptions.LockError):
            lock.release()


def _claim_row(source_id: int) -> SyncClaim:
    token = uuid.uuid4().hex
    now = timezone.now()
    try:
        with transaction.atomic():
            source = SkillSource.objects.select_for_update(nowait=True).get(pk=source_id)
            fresh = source.sync_started_at is not None and now - source.sync_started_at < timedelta(
                seconds=STALE_AFTER_SECONDS
            )
            if source.sync_status == SyncStatus.SYNCING and source.sync_lock_token and fresh:
                raise SkillSyncInProgress(f"Skill source {source.name!r} is already being synced.")
            SkillSource.objects.filter(pk=source_id).update(
                sync_status=SyncStatus.SYNCING, sync_started_at=now, sync_lock_token=token
            )
    except DatabaseError:
        # NOWAIT: another transaction holds the row right now.
        raise SkillSyncInProgress(f"Skill source {source_id} is already being synced.") from None
    return SyncClaim(source_id=source_id, token=token)


def _release_row(claim: SyncClaim) -> None:
    """If the sync ended without recording a status (an unexpected error), mark it ``error``."""
    SkillSource.objects.filter(pk=claim.source_id, sync_lock_token=claim.token).update(
        sync_status=SyncStatus.ERROR, sync_lock_token="", last_error="The sync stopped unexpectedly."
    )
