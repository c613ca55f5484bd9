"""``manage.py governance_report [--json]``: the readiness report (see ``catalog/readiness.py``)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalog.management.tables import table_lines
from catalog.readiness import readiness_report
from catalog.selectors import configuration_list

_COLUMNS = ("kind", "identifier", "data_class", "ceiling", "configuration", "zone", "would_be")


class Command(BaseCommand):
    help = "For every observe row: would it be refused under enforce, for which configuration and zone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print the report as one JSON document.")

    def handle(self, *args: Any, **options: Any) -> None:
        report = readiness_report(configurations=configuration_list())
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2, sort_keys=True))
            return
        for item in report.declassified:
            self.stdout.write(f"Declassified: {item.configuration}'s answers are deliverable to {item.zone}.")
        if not report.rows:
            self.stdout.write("No observe rows: every classified source is enforced.")
            return
        rows = [[getattr(row, column) or "(undeclared)" for column in _COLUMNS] for row in report.rows]
        for line in table_lines(_COLUMNS, rows):
            self.stdout.write(line)
        summary = report.summary
        self.stdout.write(
            f"\n{summary['observe_rows']} observe row(s); "
            f"{summary['would_refuse']} would be refused under enforce."
        )
