"""``/healthz``: the database, and Redis when configured, answer."""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse

logger = logging.getLogger(__name__)


def _check_database() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        logger.exception("health check: database unreachable")
        return False


def _check_redis() -> bool | None:
    if not settings.REDIS_URL:
        return None
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        return bool(client.ping())
    except Exception:
        logger.exception("health check: redis unreachable")
        return False


def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _check_database(), "redis": _check_redis()}
    healthy = all(value is not False for value in checks.values())
    body = {
        "status": "ok" if healthy else "unavailable",
        "checks": {
            name: ("ok" if v else "not_configured" if v is None else "failing") for name, v in checks.items()
        },
        "run_mode": "real" if settings.REDIS_URL else "embedded",
    }
    return JsonResponse(body, status=200 if healthy else 503)
