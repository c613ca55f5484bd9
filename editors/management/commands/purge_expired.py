"""``manage.py purge_expired [--dry-run]``: remove stored content past its retention, keeping the
governance events and receipts (editors/retention.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from editors.retention import RetentionLine, retention_plan, retention_purge


class Command(BaseCommand):
    help = "Purge stored responses, run transcripts and evaluation results past their retention."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Print what would be purged; purge nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        dry_run = options["dry_run"]
        lines = retention_plan() if dry_run else retention_purge()
        verb = "due" if dry_run else "purged"
        for line in lines:
            self.stdout.write(_line(line, verb))


def _line(line: RetentionLine, verb: str) -> str:
    if line.before is None:
        return f"{line.kind.name}: kept forever ({line.kind.setting} is 0)"
    return (
        f"{line.kind.name}: {line.rows} {verb} (older than {line.days} days, before "
        f"{line.before.isoformat(timespec='seconds')})"
    )
