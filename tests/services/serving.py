"""``make serve`` run by the services suite as an operator runs it: a new database for its release
step, the documented management commands, the process ids honcho prints, and a stop like Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from django.db import connection

from tests.services.worker import ROOT

VENV = Path(sys.executable).parent.parent


@pytest.fixture
def database_url() -> Iterator[str]:
    """A new, empty database beside the test database: the release step migrates it."""
    db = connection.settings_dict
    name = f"{db['NAME']}_serve"
    admin = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"]}
    with psycopg.connect(
        **admin, password=db.get("PASSWORD") or None, dbname="postgres", autocommit=True
    ) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}"')
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    yield f"postgres://{auth}@{admin['host']}:{admin['port']}/{name}"
    with psycopg.connect(
        **admin, password=db.get("PASSWORD") or None, dbname="postgres", autocommit=True
    ) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def serve_started(environment: dict[str, str], log: Path, *make_arguments: str) -> subprocess.Popen[bytes]:
    """``make serve`` in a session of its own (so that a stop reaches make and honcho alone, as Ctrl-C
    on their terminal does), its output in ``log``; requirements taken as installed."""
    command = ["make", "serve", f"VENV={VENV}", "-o", str(VENV / ".installed-run"), *make_arguments]
    with log.open("w") as output:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(VENV / "bin" / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


def started_pid(log: Path, process: str) -> int:
    """The process honcho started for a Procfile line: the line's program, or for worker and beat
    the ``deploy/keep-running`` loop around it."""
    match = re.search(rf"{process}\.1 started \(pid=(\d+)\)", log.read_text())
    assert match, log.read_text()
    return int(match[1])


def child_pid(pid: int) -> int:
    """The one child of ``pid``: the program a ``deploy/keep-running`` loop runs."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def status(client: httpx.Client, path: str) -> int | None:
    try:
        return client.get(path).status_code
    except httpx.TransportError:
        return None


def stop(serve: subprocess.Popen[bytes], log: Path) -> None:
    """Ctrl-C, as an operator would; then, if anything still runs, SIGKILL to make and honcho and to
    the process group of each line honcho started (each in a session of its own, out of reach of
    make's group)."""
    if serve.poll() is not None:
        return
    os.killpg(serve.pid, signal.SIGINT)
    try:
        serve.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(serve.pid, signal.SIGKILL)
        serve.wait(timeout=30)
        for pid in re.findall(r"\w+\.1 started \(pid=(\d+)\)", log.read_text()):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid), signal.SIGKILL)
