"""``manage.py cost_report [--from DAY] [--to DAY] [--json]``: what was consumed and what it cost,
per day (UTC), API client and configuration (see ``editors/cost_report.py``)."""

from __future__ import annotations

import datetime
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from catalog.management.tables import table_lines
from editors.cost_report import CostReport, cost_report

_COLUMNS = (
    "day", "client", "configuration", "calls", "prompt_tokens", "cached_tokens", "cache_write_tokens",
    "completion_tokens", "cost",
)  # fmt: skip
DEFAULT_DAYS = 7


def _day(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"Not a day (YYYY-MM-DD): {value!r}.") from None


class Command(BaseCommand):
    help = "Model calls, tokens and cost per day (UTC), API client and configuration."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--from",
            dest="start",
            help=f"First day, YYYY-MM-DD (default: {DEFAULT_DAYS - 1} days before --to).",
        )
        parser.add_argument("--to", dest="end", help="Last day, inclusive, YYYY-MM-DD (default: today, UTC).")
        parser.add_argument("--json", action="store_true", help="Print the report as one JSON document.")

    def handle(self, *args: Any, **options: Any) -> None:
        end = _day(options["end"]) if options["end"] else timezone.now().date()
        start = (
            _day(options["start"]) if options["start"] else end - datetime.timedelta(days=DEFAULT_DAYS - 1)
        )
        if start > end:
            raise CommandError(f"--from ({start}) is after --to ({end}).")
        report = cost_report(start=start, end=end)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
            return
        self._table(report)

    def _table(self, report: CostReport) -> None:
        if not report.rows:
            self.stdout.write(f"No model calls from {report.start} to {report.end}.")
            return
        rows = [[str(value) or "(none)" for value in row.as_dict().values()] for row in report.rows]
        for line in table_lines(_COLUMNS, rows):
            self.stdout.write(line)
        self.stdout.write(
            f"\n{report.total_calls} call(s) from {report.start} to {report.end}; total cost {report.total_cost}."
        )
