"""``manage.py create_api_client NAME --scope S [--scope S ...] [--configuration ID ...] [--trust-zone Z]``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.errors import InvalidScope
from catalog.models import Configuration
from catalog.scopes import SCOPES
from catalog.services import api_client_create
from governance.vocabulary import DataClass, TrustZone


class Command(BaseCommand):
    help = "Create an API client and print its token once (only a digest is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--scope", action="append", default=[], choices=SCOPES, dest="scopes")
        parser.add_argument("--configuration", action="append", default=[], dest="configurations")
        parser.add_argument(
            "--default-input-data-class", default=DataClass.EDITOR_CONTENT, choices=DataClass.values
        )
        parser.add_argument(
            "--trust-zone",
            default=TrustZone.EXTERNAL_GLOBAL,
            choices=TrustZone.values,
            help="Where the client runs; the API shows it nothing classified above this zone.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        wanted = options["configurations"]
        found = list(Configuration.objects.filter(identifier__in=wanted))
        missing = sorted(set(wanted) - {c.identifier for c in found})
        if missing:
            raise CommandError(f"Unknown configurations: {', '.join(missing)}")
        try:
            issued = api_client_create(
                name=options["name"],
                scopes=options["scopes"],
                configurations=found,
                default_input_data_class=DataClass(options["default_input_data_class"]),
                trust_zone=TrustZone(options["trust_zone"]),
            )
        except InvalidScope as exc:
            raise CommandError(exc.message) from exc
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(f"Created API client {issued.client.name!r}. Token (shown once):")
        self.stdout.write(issued.token)
