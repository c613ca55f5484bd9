from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from skills.management.report import sync_and_report
from skills.models import SkillSource


class Command(BaseCommand):
    help = "Sync one skill source now and print what was created, flagged, disabled, orphaned and failed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source_id", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        source = SkillSource.objects.filter(pk=options["source_id"]).first()
        if source is None:
            raise CommandError(f"There is no skill source {options['source_id']}.")
        for line in sync_and_report(source, command="sync_skill_source"):
            self.stdout.write(line)
