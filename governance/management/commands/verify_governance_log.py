"""``manage.py verify_governance_log [--anchor] [--json] [--anchor-file PATH]``: verify every chain of
the governance log, its anchors and heads against the anchors kept outside the database (by default
``GOVERNANCE_LOG_ANCHOR_FILE``), and name the first broken link (exit status 1 when anything is
broken)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from governance.chain.verify import Verification, governance_log_verify
from governance.chain.writes import anchor_record

BROKEN = 1


class Command(BaseCommand):
    help = "Verify the hash chains of the governance log and their anchors; exit 1 when one is broken."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--anchor", action="store_true", help="When the log verifies, anchor every chain's head after."
        )
        parser.add_argument("--json", action="store_true", help="Print the result as one JSON document.")
        parser.add_argument(
            "--anchor-file",
            type=Path,
            help="The anchors kept outside the database: the anchor file, a shipped copy of it, or a log "
            "holding the anchors' lines (default: GOVERNANCE_LOG_ANCHOR_FILE).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = governance_log_verify(options["anchor_file"])
        except OSError as error:
            raise CommandError(f"The anchor file cannot be read: {error}") from error
        anchored = anchor_record() if options["anchor"] and result.intact else None
        if options["json"]:
            document = {
                "intact": result.intact,
                **{
                    name: getattr(result, name)
                    for name in ("events", "chains", "anchors", "anchor_file", "file_anchors")
                },
                "breaks": [asdict(item) for item in result.breaks],
                "anchored": anchored.seq if anchored is not None else None,
            }
            self.stdout.write(json.dumps(document))
        else:
            self._summary(result, anchored.seq if anchored is not None else None)
        if not result.intact:
            raise SystemExit(BROKEN)

    def _summary(self, result: Verification, anchored: int | None) -> None:
        checked = f"{result.events} events in {result.chains} chains, {result.anchors} anchors"
        if result.file_anchors is None:
            checked += f"; no anchor file at {result.anchor_file}"
        else:
            checked += f"; {result.file_anchors} anchors in {result.anchor_file}"
        if result.intact:
            self.stdout.write(f"Governance log intact: {checked}.")
            if anchored is not None:
                self.stdout.write(f"Anchored the heads as anchor {anchored}.")
            return
        self.stderr.write(f"Governance log BROKEN: {len(result.breaks)} problem(s) in {checked}.")
        self.stderr.write(f"First broken link: {result.breaks[0]}")
        for item in result.breaks[1:]:
            self.stderr.write(f"  also: {item}")
