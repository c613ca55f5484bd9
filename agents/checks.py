"""System checks for what the agent runtime needs from the database."""

from __future__ import annotations

import sqlite3
from typing import Any

from django.core.checks import CheckMessage, Error
from django.db import connections

# The step's claim is one UPDATE … RETURNING statement (SQLite added RETURNING in 3.35).
MIN_SQLITE = (3, 35, 0)


def sqlite_version_check(
    app_configs: Any = None, *, version: tuple[int, ...] = sqlite3.sqlite_version_info, **kwargs: Any
) -> list[CheckMessage]:
    if not any(connection.vendor == "sqlite" for connection in connections.all()):
        return []
    if version >= MIN_SQLITE:
        return []
    found, needed = ".".join(map(str, version)), ".".join(map(str, MIN_SQLITE))
    return [
        Error(
            f"SQLite {found} is too old: the agent runtime needs {needed} or newer (UPDATE … RETURNING).",
            hint="Use a Python built against a newer SQLite, or set DATABASE_URL to PostgreSQL.",
            id="agents.E001",
        )
    ]
