from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.errors import ApplicationError
from governance.vocabulary import DataClass, TrustZone
from skills.ingest.github import parse_github_url
from skills.management.report import sync_and_report
from skills.models import SkillSource, SkillSourceKind, SkillTrustLevel
from skills.services import skill_source_create


class Command(BaseCommand):
    help = (
        "Ingest skills from a local folder, a zip archive or a GitHub URL: create (or reuse) a skill source "
        "for it, sync it, and print what was created, flagged, disabled and failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", help="A folder, a .zip file or a https://github.com/... URL.")
        parser.add_argument("--name", help="Name of the source (default: derived from the target).")
        parser.add_argument(
            "--trust-level", choices=SkillTrustLevel.values, default=SkillTrustLevel.UNTRUSTED
        )
        parser.add_argument("--data-class", choices=DataClass.values, default=DataClass.SECRET_ADJACENT)
        parser.add_argument("--ceiling", choices=TrustZone.values, help="Default: the data class's ceiling.")
        parser.add_argument("--ref", default=None, help="GitHub branch, tag or commit (overrides the URL's).")
        parser.add_argument("--token-env", default="", help="Environment variable holding a GitHub token.")

    def handle(self, *args: Any, **options: Any) -> None:
        location = self._location(options["target"], options["ref"])
        source = self._source(location, options)
        for line in sync_and_report(source, command="ingest_skills"):
            self.stdout.write(line)

    def _location(self, target: str, ref: str | None) -> dict[str, str]:
        if "://" in target:
            try:
                found = parse_github_url(target)
            except ApplicationError as exc:
                raise CommandError(f"{exc.code}: {exc.message}") from None
            name = "/".join(filter(None, [found.owner, found.repo, found.path]))
            return {
                "kind": found.kind,
                "url": found.repository_url,
                "path": found.path,
                "ref": found.ref if ref is None else ref,
                "name": name,
            }
        path = Path(target).expanduser().resolve()
        if path.is_dir():
            return {
                "kind": SkillSourceKind.LOCAL_FOLDER,
                "url": "",
                "path": str(path),
                "ref": "",
                "name": path.name,
            }
        if path.is_file() and zipfile.is_zipfile(path):
            return {
                "kind": SkillSourceKind.UPLOADED_ARCHIVE,
                "url": "",
                "path": str(path),
                "ref": "",
                "name": path.stem,
            }
        raise CommandError(f"{target!r} is neither a folder, a zip archive nor a GitHub URL.")

    def _source(self, location: dict[str, str], options: dict[str, Any]) -> SkillSource:
        where = {key: location[key] for key in ("kind", "url", "path", "ref")}
        if options["name"]:
            source = SkillSource.objects.filter(name=options["name"]).first()
            if source is not None and any(getattr(source, key) != value for key, value in where.items()):
                raise CommandError(f"A source named {options['name']!r} already exists for another location.")
        else:
            source = SkillSource.objects.filter(**where).first()
        if source is not None:
            self.stdout.write(
                f"Reusing source {source.name!r} (#{source.pk}); its classification is unchanged."
            )
            return source
        data_class = DataClass(options["data_class"])
        try:
            return skill_source_create(
                name=options["name"] or _unique_name(location["name"]),
                trust_level=options["trust_level"],
                default_data_class=data_class,
                default_ceiling=options["ceiling"] or data_class.ceiling,
                token_env=options["token_env"],
                kind=location["kind"],
                url=location["url"],
                path=location["path"],
                ref=location["ref"],
            )
        except ValidationError as exc:
            raise CommandError(
                "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            ) from None


def _unique_name(base: str) -> str:
    base = (base or "skills")[:90]
    name, counter = base, 2
    while SkillSource.objects.filter(name=name).exists():
        name, counter = f"{base}-{counter}", counter + 1
    return name
