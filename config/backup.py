"""Copies of the database taken while it serves, and their restore into a fresh database.

Both run modes are covered, each with its own engine's consistent copy:

- **PostgreSQL**: ``pg_dump --format=custom``, one ``REPEATABLE READ`` snapshot: every transaction
  committed before the dump began is in it, none that committed later, whatever is written meanwhile.
  Restored with ``pg_restore --single-transaction --exit-on-error`` into an empty database (tables
  and rows first, then indexes, constraints and the triggers: the governance log's append-only
  trigger and the catalogue token's triggers come back with the schema).
- **SQLite** (the embedded default): SQLite's online backup API (``sqlite3.Connection.backup``) on a
  connection of its own, in one step, so the copy is one read transaction of the write-ahead log:
  writers go on meanwhile and the copy holds what was committed when it began. A file copy of a live
  database is never made: it can tear a page mid-write and miss what still sits in the ``-wal`` file.

Restoring refuses a database that holds tables: a restore never merges into, or overwrites, a live
database. Connections of this process are closed first (the pool's too).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from django.db import connection, connections

POSTGRESQL_DUMP = "database.dump"
SQLITE_COPY = "db.sqlite3"
# pg_dump and pg_restore of a large database take their time; a stuck one must not hang a release.
_TOOL_TIMEOUT_SECONDS = 3600


class BackupError(Exception):
    """A copy or restore that cannot be made; the message says why, and nothing was changed."""


def database_vendor() -> str:
    return str(connection.vendor)


def database_copy(directory: Path) -> str:
    """Copy the default database into ``directory``; the name of the file written."""
    if connection.vendor == "postgresql":
        target = directory / POSTGRESQL_DUMP
        _run(["pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--file", str(target)])
        return target.name
    if connection.vendor == "sqlite":
        target = directory / SQLITE_COPY
        source = _sqlite_path()
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as reader:
            _sqlite_copy(reader, target)
        return target.name
    raise BackupError(f"no backup for the {connection.vendor} database engine")


def database_restore(directory: Path, name: str) -> None:
    """Restore the copy ``name`` of ``directory`` into the default database, which must hold no
    table (a new PostgreSQL database, or no SQLite file yet). Raises :class:`BackupError`."""
    source = directory / name
    if not source.is_file():
        raise BackupError(f"{source} is not a file")
    if database_tables():
        raise BackupError(
            f"the database {connection.settings_dict['NAME']} holds tables: restore into a new, empty "
            "database (create one, or move the embedded database's file aside)"
        )
    connections.close_all()
    if connection.vendor == "postgresql":
        _run(["pg_restore", "--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error",
              "--dbname", str(connection.settings_dict["NAME"]), str(source)])  # fmt: skip
    elif connection.vendor == "sqlite":
        target = _sqlite_path()
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as reader:
            _sqlite_copy(reader, target)
    else:
        raise BackupError(f"no restore for the {connection.vendor} database engine")


def database_tables() -> list[str]:
    """The tables of the default database (none: a database a restore may fill)."""
    with connection.cursor() as cursor:
        return list(connection.introspection.table_names(cursor))


def _sqlite_path() -> Path:
    name = str(connection.settings_dict["NAME"])
    if connection.is_in_memory_db():  # type: ignore[attr-defined]
        raise BackupError("an in-memory SQLite database has no file to back up or restore")
    return Path(name)


def _sqlite_copy(reader: sqlite3.Connection, target: Path) -> None:
    """The whole of ``reader``'s database into ``target`` in one step (one read transaction), then
    checked page by page; a failed check removes the copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(target) as writer:
        reader.backup(writer)
        (verdict,) = writer.execute("PRAGMA quick_check").fetchone()
    writer.close()
    if verdict != "ok":
        target.unlink()
        raise BackupError(f"the copy failed SQLite's check: {verdict}")


def _run(command: list[str]) -> None:
    """Run a PostgreSQL client tool on the default database's server, its connection in libpq's
    variables (so the password is never on a command line)."""
    try:
        result = subprocess.run(
            command,
            env={**os.environ, **_libpq_environment(connection.settings_dict)},
            capture_output=True,
            text=True,
            timeout=_TOOL_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BackupError(f"{command[0]} could not run: {exc}") from None
    if result.returncode != 0:
        raise BackupError(f"{command[0]} failed: {result.stderr.strip()[-2000:]}")


def _libpq_environment(settings_dict: dict[str, Any]) -> dict[str, str]:
    values = {
        "PGHOST": settings_dict.get("HOST"),
        "PGPORT": settings_dict.get("PORT"),
        "PGUSER": settings_dict.get("USER"),
        "PGPASSWORD": settings_dict.get("PASSWORD"),
        "PGDATABASE": settings_dict.get("NAME"),
        "PGSSLMODE": (settings_dict.get("OPTIONS") or {}).get("sslmode"),
    }
    return {name: str(value) for name, value in values.items() if value}
