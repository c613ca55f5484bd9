"""The brokers the services suite runs Celery on: Redis (``REDIS_URL``) and RabbitMQ.

RabbitMQ is found at ``SERVICES_RABBITMQ_URL`` (default ``amqp://guest:guest@127.0.0.1:5672//``, the
local server's default virtual host). When it is unreachable its tests are skipped with the reason,
or fail under ``REQUIRE_SERVICES=1``, as the suite's other services are.

The :func:`broker` fixture gives the environment that points a process at the broker (read by the
settings and by Celery itself) after emptying its queue. This process keeps publishing to Redis, so
what a test sends through RabbitMQ is published by a process started with that environment
(:func:`runs_published`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import pytest
import redis
from django.conf import settings
from kombu import Connection, Exchange, Queue

from tests.services.worker import ROOT, worker_env

RABBITMQ_URL = os.environ.get("SERVICES_RABBITMQ_URL") or "amqp://guest:guest@127.0.0.1:5672//"
BROKERS = ("redis", "rabbitmq")


@dataclass(frozen=True)
class Broker:
    name: str
    url: str

    @property
    def env(self) -> dict[str, str]:
        return {"CELERY_BROKER_URL": self.url}


def rabbitmq_problem() -> str | None:
    try:
        with Connection(RABBITMQ_URL, connect_timeout=3) as connection:
            connection.ensure_connection(max_retries=0)
    except Exception as error:
        return f"RabbitMQ unreachable at SERVICES_RABBITMQ_URL: {type(error).__name__}"
    return None


def require_rabbitmq() -> None:
    problem = rabbitmq_problem()
    if problem:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"services required but unavailable: {problem}", pytrace=False)
        pytest.skip(f"services unavailable: {problem}")


def rabbitmq_purge() -> None:
    """Empty Celery's default queue on RabbitMQ (declared if missing, as a worker declares it)."""
    with Connection(RABBITMQ_URL, connect_timeout=3) as connection:
        queue = Queue("celery", Exchange("celery", type="direct"), routing_key="celery")
        bound = queue(connection.default_channel)
        bound.declare()
        bound.purge()


@pytest.fixture(params=BROKERS)
def broker(request: pytest.FixtureRequest) -> Broker:
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    if request.param == "rabbitmq":
        require_rabbitmq()
        rabbitmq_purge()
        return Broker("rabbitmq", RABBITMQ_URL)
    return Broker("redis", settings.REDIS_URL)


def runs_published(broker: Broker, *, configuration: str, count: int) -> list[str]:
    """Start ``count`` runs of ``configuration`` from a process publishing to ``broker``; their ids."""
    script = (
        "import django; django.setup(); from catalog.models import Configuration; "
        "from agents.services import run_create; from governance.vocabulary import DataClass; "
        f"configuration = Configuration.objects.get(identifier={configuration!r}); "
        f"runs = [run_create(configuration=configuration, input_text='Go.', "
        f"input_data_class=DataClass.PUBLIC_CONTENT) for _ in range({count})]; "
        "print(' '.join(str(run.id) for run in runs))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=worker_env(**broker.env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()
