"""What the governance log's tests share: writing events, and a cursor of someone with write access
to the database, past the append-only triggers (the table's owner can disable them)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from governance.models import GovernanceAnchor, GovernanceAnchorHead, GovernanceEvent, GovernanceLogHead
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import Decision

EVENTS = GovernanceEvent._meta.db_table
ANCHORS = GovernanceAnchor._meta.db_table
HEADS = GovernanceLogHead._meta.db_table
ANCHOR_HEAD = GovernanceAnchorHead._meta.db_table

# A test marked with it runs in the default suite (SQLite) and in the services suite (PostgreSQL).
BOTH = pytest.mark.parametrize(
    "database", ["default", pytest.param("postgresql", marks=pytest.mark.services)]
)


def events_write(count: int) -> list[GovernanceEvent]:
    context = EventContext(correlation_id="req-1", api_client="acme", configuration="demo")
    return [
        enforced_event_record(context=context, decision=Decision.SECRET_REDACTED, reason=f"redacted {n}")
        for n in range(count)
    ]


@contextmanager
def as_attacker() -> Iterator[Any]:
    """A cursor of someone with write access to the database, past the append-only trigger."""
    with connection.cursor() as cursor:
        postgres = connection.vendor == "postgresql"
        for table in (EVENTS, ANCHORS):
            if postgres:
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_append_only")
        try:
            yield cursor
        finally:
            for table in (EVENTS, ANCHORS):
                if postgres:
                    cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {table}_append_only")


def verify_command(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("verify_governance_log", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def anchor_file() -> Path:
    """Where this test's anchors are kept outside the database (tests/conftest.py gives each its own)."""
    return Path(settings.GOVERNANCE_LOG_ANCHOR_FILE)
