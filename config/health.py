"""``/healthz``: can the service make progress? 200 when it can, 503 when it cannot.

Checked in order: the database answers; in the real mode (a broker, workers) the broker is reachable
through Celery's own connection (RabbitMQ or Redis, as ``CELERY_BROKER_URL`` names it) and at least
one worker answers a ping over it within ``HEALTH_WORKER_PING_TIMEOUT_MS`` (the answer names the
worker, when it started and how many times it had started before: ``config/worker_starts.py``); then each check named
in ``HEALTH_CHECKS`` (dotted paths, so that apps above ``config`` add theirs without ``config``
importing them: the reaper's last tick and the oldest waiting run in ``agents/health.py``). In the
embedded default (tasks run in-process, eagerly) the broker, the workers and whatever only a worker
does are ``not_applicable``, and do not fail the answer.

Every check is guarded: one that raises is ``failing`` (and logged), never a 500. The body names
states and figures only; no message of an exception reaches it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils.module_loading import import_string
from kombu import Connection

from config.celery import app
from config.worker_starts import worker_starts

logger = logging.getLogger(__name__)


class CheckStatus(StrEnum):
    OK = "ok"
    FAILING = "failing"
    NOT_APPLICABLE = "not_applicable"


@dataclass(frozen=True)
class CheckResult:
    status: CheckStatus
    detail: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status.value, **self.detail}


OK = CheckResult(CheckStatus.OK)
NOT_APPLICABLE = CheckResult(CheckStatus.NOT_APPLICABLE)
Check = Callable[[], CheckResult]


def embedded() -> bool:
    """True in the embedded default: no broker, tasks run in the process that enqueues them."""
    return bool(settings.CELERY_TASK_ALWAYS_EAGER)


def _check_database() -> CheckResult:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return OK if cursor.fetchone() == (1,) else CheckResult(CheckStatus.FAILING)


def _broker() -> Connection:
    """Celery's own connection to the broker the workers use (``CELERY_BROKER_URL``, else
    ``REDIS_URL``): its transport, options and credentials, whichever broker that is."""
    return app.connection_for_write(url=settings.CELERY_BROKER_URL, connect_timeout=2)


def _check_broker() -> CheckResult:
    with _broker() as broker:
        broker.ensure_connection(max_retries=0, timeout=2)
    return OK


def _check_workers() -> CheckResult:
    """At least one worker answers a ping. Waits at most the timeout, and returns at the first answer,
    with the start that worker recorded."""
    timeout = settings.HEALTH_WORKER_PING_TIMEOUT_MS / 1000
    with _broker() as broker:
        answers = app.control.ping(timeout=timeout, limit=1, connection=broker)
    status = CheckStatus.OK if answers else CheckStatus.FAILING
    starts = worker_starts(node for answer in answers for node in answer)
    nodes = {node: None if start is None else start.as_json() for node, start in starts.items()}
    return CheckResult(status, {"answered": len(answers), "timeout_seconds": timeout, "nodes": nodes})


def _guarded(name: str, check: Check) -> CheckResult:
    try:
        return check()
    except Exception:
        logger.exception("health check %s raised", name)
        return CheckResult(CheckStatus.FAILING)


def _results() -> dict[str, CheckResult]:
    results = {"database": _guarded("database", _check_database)}
    if embedded():
        results["broker"] = results["workers"] = NOT_APPLICABLE
    else:
        results["broker"] = _guarded("broker", _check_broker)
        reachable = results["broker"].status is CheckStatus.OK
        results["workers"] = (
            _guarded("workers", _check_workers) if reachable else CheckResult(CheckStatus.FAILING)
        )
    for name, path in settings.HEALTH_CHECKS.items():
        results[name] = _guarded(name, import_string(path))
    return results


def healthz(request: HttpRequest) -> JsonResponse:
    results = _results()
    healthy = all(result.status is not CheckStatus.FAILING for result in results.values())
    body = {
        "status": "ok" if healthy else "unavailable",
        "run_mode": "embedded" if embedded() else "real",
        "checks": {name: result.as_json() for name, result in results.items()},
    }
    return JsonResponse(body, status=200 if healthy else 503)
