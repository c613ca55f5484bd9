"""A backup of the service, taken while it serves, and its restore into a fresh database
(docs/decisions/0037-backups-upgrades-retention.md).

A backup is a folder: the copy of the anchor file (``governance-anchors.jsonl``, taken first, see
``governance/chain/backup.py``), the database's copy (``config/backup.py``: ``pg_dump``'s custom
format, or SQLite's online backup) and ``manifest.json``, written last, so a folder without it is
an unfinished backup. Keys are never in a backup: they live in the environment (the embedded
default's in ``APP_VAR_DIR/development_secret_key``), and the manifest names the ids of the keys
that were configured, so a restore can say which are missing.

What a backup holds: everything committed before its database snapshot began. Every write
acknowledged to a client before then (a run's ``202``, a completion, a stored response, an event)
commits before the answer leaves, so it is in the copy; later writes are not, and are lost by a
restore unless the database's own point-in-time recovery replays them.

A restore fills a new, empty database, sets the live anchor file aside and puts the backup's copy in
its place, and hands the runs that were in flight to the reaper (:func:`runs_release_restored`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from agents.runtime.leases import runs_release_restored
from config.backup import BackupError, database_copy, database_restore, database_vendor
from governance.chain.backup import anchor_file_copy, anchor_file_reinstate
from governance.chain.keys import log_keys

MANIFEST = "manifest.json"
ANCHOR_COPY = "governance-anchors.jsonl"
FORMAT = 1


@dataclass(frozen=True)
class Backup:
    """What ``manifest.json`` of a backup says: when it was taken, of which engine, the database's
    file in the folder, the anchor file's copy (None when there was no anchor file) and its lines,
    the migrations the database had, and the ids of the log keys configured when it was taken."""

    created_at: datetime
    vendor: str
    database: str
    anchor_file: str | None
    anchor_lines: int | None
    migrations: tuple[str, ...]
    key_ids: tuple[str, ...]

    def document(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "created_at": self.created_at.isoformat(),
            "vendor": self.vendor,
            "database": self.database,
            "anchor_file": self.anchor_file,
            "anchor_lines": self.anchor_lines,
            "migrations": list(self.migrations),
            "key_ids": list(self.key_ids),
        }


@dataclass(frozen=True)
class Restored:
    """What a restore did: the backup it read, where the live anchor file was set aside (None when
    there was none), how many runs it handed to the reaper, the migrations this code would still
    apply (the release step's ``migrate``), and the ids of the backup's keys not configured now."""

    backup: Backup
    anchor_file_aside: Path | None
    runs_released: int
    migrations_pending: int
    key_ids_missing: tuple[str, ...]


def backup_take(*, directory: Path) -> Backup:
    """Back the service up into ``directory`` (created; it must not hold anything yet)."""
    if directory.exists() and any(directory.iterdir()):
        raise BackupError(f"{directory} is not empty: a backup goes into a new folder")
    directory.mkdir(parents=True, exist_ok=True)
    created_at = timezone.now()
    # The anchors first, the database's snapshot after: every anchor the copy names is committed
    # before the snapshot, so the restored database holds it.
    lines = anchor_file_copy(Path(settings.GOVERNANCE_LOG_ANCHOR_FILE), directory / ANCHOR_COPY)
    migrations = tuple(
        sorted(f"{app}.{name}" for app, name in MigrationRecorder(connection).applied_migrations())
    )
    backup = Backup(
        created_at=created_at,
        vendor=database_vendor(),
        database=database_copy(directory),
        anchor_file=ANCHOR_COPY if lines is not None else None,
        anchor_lines=lines,
        migrations=migrations,
        key_ids=tuple(log_keys().by_id),
    )
    (directory / MANIFEST).write_text(json.dumps(backup.document(), indent=2) + "\n")
    return backup


def backup_read(directory: Path) -> Backup:
    """The manifest of the backup in ``directory``; raises :class:`BackupError` when there is none
    (an unfinished backup) or it cannot be read."""
    try:
        document = json.loads((directory / MANIFEST).read_text())
        if document["format"] != FORMAT:
            raise BackupError(f"{directory / MANIFEST} is of format {document['format']}, not {FORMAT}")
        return Backup(
            created_at=datetime.fromisoformat(document["created_at"]),
            vendor=document["vendor"],
            database=document["database"],
            anchor_file=document["anchor_file"],
            anchor_lines=document["anchor_lines"],
            migrations=tuple(document["migrations"]),
            key_ids=tuple(document["key_ids"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BackupError(f"{directory} holds no finished backup ({MANIFEST}): {error}") from None


def backup_restore(*, directory: Path) -> Restored:
    """Restore the backup in ``directory`` into the default database, which must be new and empty,
    then reinstate its anchor file and release its runs (module docstring). Raises
    :class:`BackupError` before changing anything when the backup is of another engine, or names
    migrations this code does not have (restore with the release that took it, then upgrade)."""
    backup = backup_read(directory)
    if backup.vendor != database_vendor():
        raise BackupError(f"the backup is of a {backup.vendor} database, this one is {database_vendor()}")
    executor = MigrationExecutor(connection)
    known = {f"{app}.{name}" for app, name in executor.loader.disk_migrations}
    unknown = sorted(set(backup.migrations) - known)
    if unknown:
        raise BackupError(
            f"the backup holds migrations this code does not have ({', '.join(unknown[:5])}): restore it "
            "with the release that took it, then upgrade"
        )
    database_restore(directory, backup.database)
    now = timezone.now()
    copy = directory / backup.anchor_file if backup.anchor_file is not None else None
    aside = anchor_file_reinstate(copy, Path(settings.GOVERNANCE_LOG_ANCHOR_FILE), now=now)
    released = runs_release_restored(now=now)
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    configured = set(log_keys().by_id)
    return Restored(
        backup=backup,
        anchor_file_aside=aside,
        runs_released=released,
        migrations_pending=len(pending),
        key_ids_missing=tuple(key for key in backup.key_ids if key not in configured),
    )
