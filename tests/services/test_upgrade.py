"""The upgrade from the previous release, with data in it, on PostgreSQL.

There are no tags: the previous release is the commit before the apps were split by feature
(``PREVIOUS_RELEASE``, decision 0031). Its tree is taken from the repository the test runs in (``git
archive``; a clone without that history skips with the reason). The old code migrates a new database
and fills it (its ``seed_demo``, a run through its ``run_agent``, an anchor of the governance log,
keyed as the old real mode keyed it: by ``DJANGO_SECRET_KEY``). The new code then migrates it as the
release step does, with ``GOVERNANCE_LOG_KEY`` set and the old key listed as the README's upgrade
says. The old code then runs once more on the migrated database (the migrations are safe while it
still serves), and the smoke checks run: admin pages, a completion through the API with the token the
old code issued, the old runs, and ``verify_governance_log`` over what both wrote.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.canaries import generate_canaries

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
PREVIOUS_RELEASE = "20dc3b1"
_OWN = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "GOVERNANCE_", "APP_VAR_DIR", "ENV_FILE", "AGENT_")


def previous_release_tree(target: Path) -> None:
    """The previous release's files under ``target``, or a skip naming why there are none."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{PREVIOUS_RELEASE}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        pytest.skip(f"commit {PREVIOUS_RELEASE} (the previous release) is not in this clone's history")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", PREVIOUS_RELEASE], cwd=ROOT, capture_output=True
    )
    assert archive.returncode == 0, archive.stderr
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")


@pytest.fixture
def upgrade_database() -> Iterator[str]:
    db = connection.settings_dict
    name = f"{db['NAME']}_upgrade"
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


OLD_CODE_FILLS = """
from django.core.management import call_command
call_command("migrate", "--noinput", verbosity=0)
call_command("seed_demo")
call_command("run_agent", "--configuration", "demo-assistant", "--input", {input!r})
call_command("verify_governance_log", "--anchor")
"""


def manage(code: Path, environment: dict[str, str], *arguments: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=code,
        env={**environment, "PYTHONPATH": str(code)},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, f"{code.name} manage.py {arguments[0]}: {result.stderr[-3000:]}"
    return result.stdout


def test_the_previous_release_upgrades_with_its_data(upgrade_database, tmp_path):
    old = tmp_path / "previous-release"
    previous_release_tree(old)
    secret_key = secrets.token_urlsafe(50)
    base = {name: value for name, value in os.environ.items() if not name.startswith(_OWN)}
    base.update(
        {
            "DATABASE_URL": upgrade_database,  # no REDIS_URL: tasks run in the command's process
            "DJANGO_SECRET_KEY": secret_key,
            "GOVERNANCE_LOG_ANCHOR_FILE": str(tmp_path / "governance-anchors.jsonl"),
            "APP_VAR_DIR": str(tmp_path / "var"),
            "AGENT_RUNS_IN_BACKGROUND": "false",
            "LOG_LEVEL": "ERROR",
        }
    )
    canary = generate_canaries(seed=20261208)[0]
    # One process of the old code: its migrations, its demo, a run with a secret in its input (so the
    # log holds events), and an anchor of the log's heads.
    filled = manage(old, base, "shell", "--no-imports", "-c", OLD_CODE_FILLS.format(input=canary.context))
    token = re.search(r"API token:\s+(\S+)", filled)[1]  # type: ignore[index]
    assert "Status: completed" in filled
    assert "Governance log intact" in filled

    new = {
        **base,
        "GOVERNANCE_LOG_KEY": secrets.token_urlsafe(32),
        "GOVERNANCE_LOG_OLD_KEYS": f"secret:{secret_key}",
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    release = re.search(r"^release: (.*)$", (ROOT / "Procfile").read_text(), re.MULTILINE)
    assert release is not None
    released = subprocess.run(
        ["sh", "-c", release[1]], cwd=ROOT, env=new, capture_output=True, text=True, timeout=300
    )
    assert released.returncode == 0, released.stderr[-3000:]
    # The old code still serving once the release step has migrated: its runs and events are written.
    serving = manage(old, base, "run_agent", "--configuration", "demo-assistant", "--input", canary.context)
    assert "Status: completed" in serving
    late_run = re.search(r"^Run (\S+) ", serving, re.MULTILINE)[1]  # type: ignore[index]
    code = f"from tests.services.upgrade_smoke import main; main({token!r}, {late_run!r})"
    smoke = json.loads(manage(ROOT, new, "shell", "--no-imports", "-c", code))

    assert smoke["pages"] == {
        "/admin/": 200,
        "/admin/catalog/configuration/": 200,
        "/admin/snippets/snippet/": 200,
        "/admin/agents/agentrun/": 200,
        "/admin/agents/agentrun/retention/": 200,
        "/admin/governance/governanceevent/": 200,
        "run": 200,
    }
    assert smoke["completion"] == [
        200,
        "tool_calls",
        "local-echo",
        True,
    ]  # the offline echo model asks for a tool
    status, messages = smoke["old_run"]
    assert (status, messages > 0) == ("completed", True)
    verified, output = smoke["verify"]
    assert verified == 0, output
    assert output.startswith("Governance log intact: ")
    assert smoke["unapplied"] == 0
    assert smoke["late_run"] == ["completed", [""]]  # its event has no key id, and verifies
    assert " 1 anchors in " in output
