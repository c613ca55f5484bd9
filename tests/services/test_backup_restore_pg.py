"""The real mode's backup round trip on PostgreSQL: ``pg_dump`` taken while runs are in flight and a
writer writes, restored with ``pg_restore`` into a new database by ``manage.py restore_database`` in
a process of its own (tests/agents/backup_scenario.py holds the scenario; the embedded default's
round trip is tests/agents/test_backup_restore.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from config.celery import app
from editors.demo import demo_seed
from tests.agents.backup_scenario import before_backup

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
_OWN = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "GOVERNANCE_", "APP_VAR_DIR", "ENV_FILE")


@pytest.fixture
def fresh_database() -> Iterator[str]:
    """A new, empty database beside the test database; its URL."""
    db = connection.settings_dict
    name = f"{db['NAME']}_restored"
    admin = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"]}
    if db.get("PASSWORD"):
        admin["password"] = db["PASSWORD"]
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as c:  # type: ignore[arg-type]
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}"')
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    yield f"postgres://{auth}@{admin['host']}:{admin['port']}/{name}"
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as c:  # type: ignore[arg-type]
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def eager_steps() -> Iterator[None]:
    """The scenario's finished runs finish in this process (no worker runs here)."""
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = eager


def test_a_pg_dump_taken_while_runs_are_in_flight_restores_whole(fresh_database, tmp_path, eager_steps):
    demo_seed()
    record = before_backup(tmp_path / "backup")
    (tmp_path / "record.json").write_text(json.dumps(record))
    manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
    assert (manifest["vendor"], manifest["database"], manifest["anchor_lines"]) == (
        "postgresql",
        "database.dump",
        2,
    )

    environment = {name: value for name, value in os.environ.items() if not name.startswith(_OWN)}
    environment.update(
        {
            "DATABASE_URL": fresh_database,  # no REDIS_URL: the sweep's steps run in that process
            "DJANGO_SECRET_KEY": settings.SECRET_KEY,
            "GOVERNANCE_LOG_KEY": settings.GOVERNANCE_LOG_KEY,
            "GOVERNANCE_LOG_ANCHOR_FILE": str(settings.GOVERNANCE_LOG_ANCHOR_FILE),
            "AGENT_RUNS_IN_BACKGROUND": "false",
            "LOG_LEVEL": "ERROR",
        }
    )
    code = f"from tests.agents.backup_scenario import main; main('after', {str(tmp_path)!r})"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    after = json.loads((tmp_path / "after.json").read_text())
    commands = after["commands"]

    assert commands["restore"]["status"] == 0, commands["restore"]["stderr"]
    assert commands["verify"]["status"] == 0, commands["verify"]["stderr"]
    assert "2 anchors in " in commands["verify"]["stdout"]
    assert commands["verify_aside"]["status"] == 1
    assert (
        "anchors 3 to 3 are in the anchor file and gone from the database"
        in commands["verify_aside"]["stderr"]
    )

    statuses = after["statuses"]
    assert set(record["acknowledged"]["runs"]) <= statuses.keys()
    assert set(record["acknowledged"]["events"]) <= set(after["events"])
    assert record["after"] not in statuses
    assert after["during_with_event"] == sorted(after["during_restored"])
    in_flight = sorted([record["queued"], record["leased"], *after["during_restored"]])
    assert after["requeued"] == in_flight
    assert after["completed_runs"] == sorted([*record["completed"], *in_flight])
    assert after["intact"], after["breaks"]
