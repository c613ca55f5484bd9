"""``manage.py restore_database DIR``: restore a backup of ``backup_database`` into a new, empty
database, reinstate its anchor file and hand the runs that were in flight to the reaper
(agents/backups.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.backups import backup_restore
from config.backup import BackupError


class Command(BaseCommand):
    help = "Restore a backup into a new, empty database (DATABASE_URL, or the embedded database's file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, help="The folder backup_database wrote.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            restored = backup_restore(directory=options["directory"])
        except BackupError as error:
            raise CommandError(str(error)) from error
        backup = restored.backup
        self.stdout.write(
            f"Restored the backup of {backup.created_at.isoformat()}; {restored.runs_released} run(s) in "
            "flight then resume at the reaper's next sweep (Celery beat, or the embedded server, as it starts)."
        )
        if restored.anchor_file_aside is not None:
            self.stdout.write(
                f"The anchor file before the restore is kept as {restored.anchor_file_aside}: "
                "verify_governance_log --anchor-file on it names what the restore wound back."
            )
        if restored.migrations_pending:
            self.stdout.write(
                f"{restored.migrations_pending} migration(s) of this release are not applied yet: run the "
                "release step (manage.py migrate) before serving."
            )
        if restored.key_ids_missing:
            self.stderr.write(
                f"The log keys {', '.join(restored.key_ids_missing)} signed this backup and are not "
                "configured: set them (GOVERNANCE_LOG_KEY or GOVERNANCE_LOG_OLD_KEYS) to verify its log."
            )
