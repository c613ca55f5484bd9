"""``manage.py backup_database --output DIR``: a consistent copy of the database and of the governance
log's anchor file, taken while the service serves (agents/backups.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.backups import backup_take
from config.backup import BackupError


class Command(BaseCommand):
    help = "Back up the database and the governance log's anchor file into a new folder, while serving."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, required=True, help="A new (or empty) folder.")

    def handle(self, *args: Any, **options: Any) -> None:
        directory: Path = options["output"]
        try:
            backup = backup_take(directory=directory)
        except BackupError as error:
            raise CommandError(str(error)) from error
        anchors = "no anchor file" if backup.anchor_lines is None else f"{backup.anchor_lines} anchor line(s)"
        self.stdout.write(
            f"Backed up the {backup.vendor} database as of {backup.created_at.isoformat()} into {directory} "
            f"({backup.database}, {anchors}, {len(backup.migrations)} migrations)."
        )
        self.stdout.write(
            "Keys are not in it: keep GOVERNANCE_LOG_KEY and GOVERNANCE_LOG_OLD_KEYS (the embedded "
            f"default: APP_VAR_DIR/development_secret_key) with it; key ids {', '.join(backup.key_ids)}."
        )
