"""``make serve``'s processes: when the worker dies the web keeps serving, ``/healthz`` reports that
no worker answers, the worker is started again (``deploy/keep-running``) and takes the run that waited
for it, and ``/healthz`` then names the worker that answers and how often it had started before; and,
started by root with ``SERVE_USER``, every process runs as that user and nothing needs root.

Redis is the broker here, so these tests need no RabbitMQ.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from django.conf import settings

from tests.services.serving import VENV, child_pid, manage, serve_started, started_pid, status, stop
from tests.services.test_faults import free_port
from tests.services.worker import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

UNPRIVILEGED = "nobody"


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """``APP_VAR_DIR``, writable by the unprivileged user too (pytest's own directories are not)."""
    path = Path(tempfile.mkdtemp(prefix="govctx-var-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam(UNPRIVILEGED)
        os.chown(path, user.pw_uid, user.pw_gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def environment(database_url, var_dir) -> dict[str, str]:
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_", "PROMETHEUS_"))
    }
    return {
        **inherited,
        "DATABASE_URL": database_url,
        "REDIS_URL": settings.REDIS_URL,  # the broker too
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "APP_VAR_DIR": str(var_dir),
        "PORT": str(free_port()),
        "WORKER_THREADS": "4",
    }


def _uid(pid: int) -> int:
    real = re.search(r"^Uid:\s+(\d+)", Path(f"/proc/{pid}/status").read_text(), re.MULTILINE)
    assert real
    return int(real[1])


def test_a_dead_worker_is_started_again_while_the_web_keeps_serving(environment, tmp_path):
    log = tmp_path / "serve.log"
    web = httpx.Client(base_url=f"http://127.0.0.1:{environment['PORT']}", timeout=10)
    serve = serve_started(environment, log)
    try:
        wait_for(
            lambda: status(web, "/healthz") == 200 or serve.poll() is not None,
            timeout=180,
            what="make serve to answer /healthz 200",
        )
        assert serve.poll() is None, log.read_text()
        manage("seed_demo", env=environment)
        issued = manage(
            "create_api_client", "ops", "--scope", "runs:create", "--scope", "runs:read",
            "--configuration", "demo-assistant", env=environment,
        )  # fmt: skip
        api = httpx.Client(
            base_url=web.base_url,
            timeout=30,
            headers={"Authorization": f"Bearer {issued.stdout.split()[-1]}"},
        )
        web_pid, loop = started_pid(log, "web"), started_pid(log, "worker")
        worker = child_pid(loop)

        os.kill(loop, signal.SIGSTOP)  # holds the restart until the gap has been looked at
        try:
            os.kill(worker, signal.SIGKILL)
            health = web.get("/healthz")  # the web still answers
            assert health.status_code == 503
            assert health.json()["checks"]["workers"] == {
                "status": "failing",
                "answered": 0,
                "timeout_seconds": 1.0,
                "nodes": {},
            }
            created = api.post(
                "/api/v1/runs", json={"configuration": "demo-assistant", "input": "Draft a note."}
            )
            assert created.status_code == 202, created.text
            run = created.headers["Location"]
            assert api.get(run).json()["status"] == "queued"  # no worker to take it
        finally:
            os.kill(loop, signal.SIGCONT)

        wait_for(lambda: api.get(run).json()["status"] == "completed", timeout=90, what="the run to complete")
        wait_for(lambda: status(web, "/healthz") == 200, timeout=30, what="/healthz to answer 200")
        workers = web.get("/healthz").json()["checks"]["workers"]
        (node,) = workers["nodes"]
        assert re.fullmatch(rf"worker\.\d+@{re.escape(socket.gethostname())}", node), node
        assert workers["nodes"][node]["restarts"] == 1
        assert (workers["status"], workers["answered"]) == ("ok", 1)

        text = log.read_text()
        assert "keep-running: celery exited with status 137; restart 1 in 1 s" in text  # 128 + SIGKILL
        assert not re.search(r"(web|worker|beat)\.1 stopped", text), text
        assert started_pid(log, "web") == web_pid and child_pid(loop) != worker

        os.killpg(serve.pid, signal.SIGINT)  # Ctrl-C on the terminal
        serve.wait(timeout=30)
        text = log.read_text()
        for process in ("web", "worker", "beat"):
            assert re.search(rf"{process}\.1 stopped \(rc=", text), text
        assert text.count("keep-running: celery exited") == 1  # stopping is not restarting
    finally:
        stop(serve, log)


def _unprivileged_problem() -> str | None:
    if os.geteuid() != 0:
        return "SERVE_USER switches users, which only root may"
    probe = subprocess.run(
        ["runuser", "-u", UNPRIVILEGED, "--", str(VENV / "bin" / "python"), "-c", "import celery"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"{UNPRIVILEGED} cannot run this virtualenv's interpreter: {probe.stderr.strip()}"
    return None


def test_make_serve_as_root_runs_every_process_as_serve_user(environment, tmp_path):
    problem = _unprivileged_problem()
    if problem:
        pytest.skip(problem)
    log = tmp_path / "serve.log"
    web = httpx.Client(base_url=f"http://127.0.0.1:{environment['PORT']}", timeout=10)
    serve = serve_started(environment, log, f"SERVE_USER={UNPRIVILEGED}")
    try:
        wait_for(
            lambda: status(web, "/healthz") == 200 or serve.poll() is not None,
            timeout=180,
            what="make serve to answer /healthz 200",
        )
        assert serve.poll() is None, log.read_text()
        uid = pwd.getpwnam(UNPRIVILEGED).pw_uid
        processes = [started_pid(log, "web")] + [
            child_pid(started_pid(log, name)) for name in ("worker", "beat")
        ]
        assert [_uid(pid) for pid in processes] == [uid, uid, uid]
        assert "superuser privileges" not in log.read_text()  # Celery's warning when a worker runs as root
        assert {path.stat().st_uid for path in Path(environment["APP_VAR_DIR"]).rglob("*")} == {uid}
    finally:
        stop(serve, log)
