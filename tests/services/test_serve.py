"""``make serve`` as an operator runs it, on PostgreSQL with RabbitMQ as the broker.

One pass through the README's "Deploying": the release step migrates a new database and collects the
static files; web (uvicorn), worker and beat start under honcho; the admin and the API docs get their
static files; an API client issued with the documented command starts a run that a worker completes;
``/metrics`` sums what the worker counted; ``/healthz`` answers 200, then 503 once the worker stops
answering; Ctrl-C stops every process.
"""

from __future__ import annotations

import os
import re
import secrets
import signal

import httpx
import pytest
import redis
from django.conf import settings

from tests.services.brokers import RABBITMQ_URL, rabbitmq_purge, require_rabbitmq
from tests.services.serving import child_pid, manage, serve_started, started_pid, status, stop
from tests.services.test_faults import free_port
from tests.services.worker import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def environment(database_url, tmp_path) -> dict[str, str]:
    require_rabbitmq()
    rabbitmq_purge()
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_", "PROMETHEUS_"))
    }
    return {
        **inherited,
        "DATABASE_URL": database_url,
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": RABBITMQ_URL,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "APP_VAR_DIR": str(tmp_path / "var"),
        "PORT": str(free_port()),
        "WORKER_THREADS": "4",
    }


def test_make_serve_migrates_serves_static_files_runs_and_reports_health(environment, tmp_path):
    log = tmp_path / "serve.log"
    base = f"http://127.0.0.1:{environment['PORT']}"
    web = httpx.Client(base_url=base, timeout=10)
    serve = serve_started(environment, log)
    try:
        wait_for(
            lambda: status(web, "/healthz") == 200 or serve.poll() is not None,
            timeout=180,
            what="make serve to answer /healthz 200",
        )
        assert serve.poll() is None, log.read_text()
        text = log.read_text()
        assert f"Serving on {base}/ (admin /admin/, API /api/v1/, docs /api/docs/, health /healthz)" in text
        assert "Applying agents.0001" in text  # the release step migrated the new database
        assert re.search(r"\d+ static files copied to '.*/var/static', \d+ post-processed", text)
        _assert_static_files(web)

        manage("seed_demo", env=environment)
        issued = manage(
            "create_api_client", "ops", "--scope", "runs:create", "--scope", "runs:read",
            "--configuration", "demo-assistant", env=environment,
        )  # fmt: skip
        assert issued.stderr == ""  # no start-up lines around the token
        token = issued.stdout.split()[-1]
        api = httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {token}"})
        created = api.post(
            "/api/v1/runs", json={"configuration": "demo-assistant", "input": "What is our tone of voice?"}
        )
        assert created.status_code == 202, created.text
        run = created.headers["Location"]
        wait_for(lambda: api.get(run).json()["status"] == "completed", timeout=60, what="the run to complete")
        assert (
            len(api.get(run).json()["steps"]) == 2
        )  # asked about its tone of voice, the demo calls a tool, then answers

        # Counted in the worker, summed by the web process. The demo's seed started two runs of its own
        # on the worker (editors/demo_activity.py): one completed in two steps, one refused at once.
        refused = 'govctx_steps_total{status="finished",termination_reason="policy_denied"} 1.0'
        wait_for(lambda: refused in web.get("/metrics").text, timeout=60, what="the demo's refused run")
        metrics = web.get("/metrics").text
        assert 'govctx_steps_total{status="finished",termination_reason="completed"} 2.0' in metrics
        decisions = re.findall(r'govctx_governance_decisions_total\{outcome="(\w+)"\} ([0-9.]+)', metrics)
        # One per send: two for each completed run, one refused for the demo's refused run.
        assert sorted(decisions) == [("observed", "0.0"), ("permitted", "4.0"), ("refused", "1.0")], decisions

        worker = child_pid(started_pid(log, "worker"))
        os.kill(worker, signal.SIGSTOP)  # stopped: alive for honcho, deaf to the ping
        try:
            wait_for(lambda: status(web, "/healthz") == 503, timeout=60, what="/healthz to answer 503")
            assert web.get("/healthz").json()["checks"]["workers"]["status"] == "failing"
        finally:
            os.kill(worker, signal.SIGCONT)

        os.killpg(serve.pid, signal.SIGINT)  # Ctrl-C on the terminal
        serve.wait(timeout=30)
        text = log.read_text()
        for process in ("web", "worker", "beat"):
            assert re.search(rf"{process}\.1 stopped \(rc=", text), text
        with pytest.raises(httpx.ConnectError):
            web.get("/healthz")
    finally:
        stop(serve, log)


def _assert_static_files(web: httpx.Client) -> None:
    """The admin's stylesheet and the API docs' script, under content-hashed names, compressed and
    cached for a year, as WhiteNoise serves what collectstatic wrote."""
    login = web.get("/admin/login/").text
    stylesheet = re.search(r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', login)
    assert stylesheet, login
    css = web.get(stylesheet[1], headers={"Accept-Encoding": "gzip"})
    assert css.status_code == 200
    assert (css.headers["Content-Encoding"], css.headers["Cache-Control"]) == (
        "gzip",
        "max-age=315360000, public, immutable",
    )
    assert css.headers["Content-Type"].startswith("text/css")
    docs = web.get("/api/docs/").text
    bundle = re.search(
        r'src="(/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle\.[0-9a-f]{12}\.js)"', docs
    )
    assert bundle, docs
    script = web.get(bundle[1])
    assert script.status_code == 200
    assert b"SwaggerUIBundle" in script.content
