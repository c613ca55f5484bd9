"""The runtime refuses to start on a SQLite without UPDATE … RETURNING."""

from __future__ import annotations

from agents.checks import sqlite_version_check


def test_an_old_sqlite_is_an_error_naming_the_versions():
    errors = sqlite_version_check(version=(3, 34, 1))
    assert [(e.id, e.msg) for e in errors] == [
        (
            "agents.E001",
            "SQLite 3.34.1 is too old: the agent runtime needs 3.35.0 or newer (UPDATE … RETURNING).",
        )
    ]


def test_a_current_sqlite_passes():
    assert sqlite_version_check(version=(3, 35, 0)) == []
