"""The release step reads its settings from the settings file alone, on PostgreSQL.

Issue 41's operator put the real mode's settings in ``.env``; ``make release`` then migrated a new
SQLite file while the web process served PostgreSQL. Here the Procfile's release line runs with
``DATABASE_URL`` and the rest only in a file (``ENV_FILE``): the database the file names is migrated,
the static files land under the file's ``APP_VAR_DIR``, and a management command run the same way
answers from that database.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from tests.services.serving import VENV
from tests.services.worker import ROOT

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

_OWN = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "GOVERNANCE_", "APP_VAR_DIR", "ENV_FILE")


@pytest.fixture
def database() -> Iterator[tuple[str, dict[str, object]]]:
    """A new, empty database beside the test database, its URL and how to connect to it."""
    db = connection.settings_dict
    name = f"{db['NAME']}_envfile"
    admin: dict[str, object] = {
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
        "user": db["USER"],
        "password": db.get("PASSWORD") or None,
    }
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as c:  # type: ignore[arg-type]
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}"')
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    yield f"postgres://{auth}@{admin['host']}:{admin['port']}/{name}", {**admin, "dbname": name}
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as c:  # type: ignore[arg-type]
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_release_step_migrates_the_database_the_env_file_names(database, tmp_path):
    url, connect = database
    var = tmp_path / "var"
    env_file = tmp_path / "production.env"
    env_file.write_text(
        f"DATABASE_URL={url}\n"
        f"REDIS_URL={settings.REDIS_URL}\n"
        f"DJANGO_SECRET_KEY={secrets.token_urlsafe(50)}\n"
        f"GOVERNANCE_LOG_KEY={secrets.token_urlsafe(32)}\n"
        f"APP_VAR_DIR={var}\n"
    )
    environment = {name: value for name, value in os.environ.items() if not name.startswith(_OWN)}
    environment.update(
        {"ENV_FILE": str(env_file), "PATH": f"{VENV / 'bin'}:{environment['PATH']}", "PYTHONPATH": str(ROOT)}
    )
    release = re.search(r"^release: (.*)$", (ROOT / "Procfile").read_text(), re.MULTILINE)
    assert release is not None
    result = subprocess.run(
        ["sh", "-c", release[1]], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr

    with psycopg.connect(**connect) as c:  # type: ignore[arg-type]
        applied = set(c.execute("SELECT app, name FROM django_migrations").fetchall())
    assert {("governance", "0001_initial"), ("agents", "0001_initial")} <= applied
    assert (var / "static" / "staticfiles.json").is_file()  # collectstatic wrote under the file's dir
    assert not (var / "db.sqlite3").exists()  # and no embedded database was made beside it

    script = "from django.db import connection; print(connection.vendor, connection.settings_dict['NAME'])"
    shell = subprocess.run(
        [str(VENV / "bin" / "python"), "manage.py", "shell", "--no-imports", "-c", script],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.split() == ["postgresql", connect["dbname"]]
