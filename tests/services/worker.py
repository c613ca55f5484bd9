"""Start and stop a real Celery worker process for the services suite."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

from tests.conftest import celery_executable

ROOT = Path(__file__).resolve().parents[2]

# Short redelivery settings so a killed worker's task comes back within seconds (the visibility
# timeout must still exceed the longest task, or a healthy worker runs it twice). The time limits
# leave a step with the suite's slowest tool (4 s) or provider reply (2 s) several times its length
# on a loaded machine: a soft limit hit mid-step would make the test fail for the wrong reason.
FAST_REDELIVERY = {
    "CELERY_VISIBILITY_TIMEOUT": "19",
    "CELERY_TASK_SOFT_TIME_LIMIT": "15",
    "CELERY_TASK_TIME_LIMIT": "18",
    "CELERY_UNACKED_RESTORE_INTERVAL": "1",
    "CELERY_UNACKED_RESTORE_THROTTLE": "1",
}


def test_database_url() -> str:
    """The URL of the test database pytest-django created, for the worker process to use."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def worker_env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": test_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        **FAST_REDELIVERY,
        **extra,
    }


@contextmanager
def celery_worker(
    name: str, *, include: str = "tests.services.celery_tasks", log: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    """A prefork worker in its own process group; SIGTERM on exit (SIGKILL if it will not stop)."""
    executable = celery_executable()
    assert executable, "celery executable missing"
    with log.open("w") as output:
        process = subprocess.Popen(
            [
                executable,
                "-A",
                "config",
                "worker",
                "-I",
                include,
                "--pool=prefork",
                "--concurrency=1",
                "--loglevel=INFO",
                "-n",
                f"{name}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=worker_env(**(env or {})),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield process
        finally:
            stop(process)


@contextmanager
def celery_beat(tmp_path: Path, *, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """Celery beat (the reaper's scheduler) in its own process group, its state under ``tmp_path``."""
    executable = celery_executable()
    assert executable, "celery executable missing"
    with (tmp_path / "beat.log").open("w") as output:
        process = subprocess.Popen(
            [executable, "-A", "config", "beat", "-s", str(tmp_path / "schedule"), "--loglevel=INFO"],
            cwd=ROOT,
            env=worker_env(**(env or {})),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield process
        finally:
            stop(process)


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
        process.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
