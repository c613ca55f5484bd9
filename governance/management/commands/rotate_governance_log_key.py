"""``manage.py rotate_governance_log_key``: print the settings that rotate the governance log's key.

Keys live in the environment (``GOVERNANCE_LOG_KEY``, ``GOVERNANCE_LOG_OLD_KEYS``), so the command
changes nothing itself: it generates a new key and prints the two lines to put in ``.env`` (or
wherever every process reads its variables), the current key moved to the old keys. Once every
process runs with them, new links carry the new key's id; what the old keys signed still verifies
(docs/decisions/0033-governance-log-keys-have-ids.md). The output holds keys: keep it out of logs.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from governance.chain.keys import key_rotation

# What a .env value may hold unquoted; anything else is written in single quotes (read literally).
_PLAIN = re.compile(r"[A-Za-z0-9_\-:,.]*")


class Command(BaseCommand):
    help = (
        "Generate a new governance log key; print the GOVERNANCE_LOG_KEY and GOVERNANCE_LOG_OLD_KEYS to set."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rotation = key_rotation()
        except ImproperlyConfigured as error:
            raise CommandError(str(error)) from error
        old = ",".join(rotation.old_keys)
        if "'" in old:
            raise CommandError("an old key holds a quote: set GOVERNANCE_LOG_OLD_KEYS by hand")
        self.stdout.write(
            f"# The governance log's next key has the id {rotation.key_id}; the keys before it "
            f"({', '.join(rotation.old_key_ids)}) verify what they signed.\n"
            "# Set these for every process (e.g. in .env), then restart them all.\n"
            f"GOVERNANCE_LOG_KEY={rotation.key}\n"
            f"GOVERNANCE_LOG_OLD_KEYS={old if _PLAIN.fullmatch(old) else repr_single(old)}"
        )


def repr_single(value: str) -> str:
    return f"'{value}'"
