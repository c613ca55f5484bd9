from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.errors import ApplicationError
from governance.actors import Actor
from skills.management.report import sync_report
from skills.models import SkillSource
from skills.services import skill_source_sync


class Command(BaseCommand):
    help = "Sync one skill source now and print what was created, flagged, disabled, orphaned and failed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source_id", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        source = SkillSource.objects.filter(pk=options["source_id"]).first()
        if source is None:
            raise CommandError(f"There is no skill source {options['source_id']}.")
        try:
            result = skill_source_sync(source_id=source.pk, actor=Actor.system("command:sync_skill_source"))
        except ApplicationError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        for line in sync_report(source, result):
            self.stdout.write(line)
