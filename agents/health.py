"""The runtime's state as operators watch it: the checks ``/healthz`` runs (``config/health.py``, through
``HEALTH_CHECKS``) and the gauges ``/metrics`` reads at scrape time (``config/metrics.py``, through
``METRICS_COLLECTORS``).

- The reaper (``agents.reaper.reap_sweep``, run by Celery beat every
  ``AGENT_REAPER_INTERVAL_SECONDS``) records its tick in the cache (Redis in the real mode, shared by
  every process). Silent for more than ``REAPER_SILENT_INTERVALS`` intervals, or never ticked, means
  nothing requeues the runs of a dead worker.
- A run waits for a worker while it is queued, or running between two steps (no lease: its next step
  is in the broker's queue). One waiting longer than ``HEALTH_QUEUE_MAX_WAIT_SECONDS`` means the
  workers do not keep up, or the message was lost.

Both are ``not_applicable`` in the embedded default: tasks run inside the request that enqueues them.
Its reaper is a thread of the serving process (``agents/reaper.py``); the reaper check shows that
thread's last tick, without failing on it (a long run it resumes holds the thread for as long).

Gauges (:class:`RunsCollector`, two aggregate queries per scrape): ``govctx_runs_in_flight`` (runs a
worker holds: running, leased), ``govctx_runs_waiting`` (the queue's depth: runs waiting as above) and
``govctx_oldest_waiting_run_seconds`` (0 when none waits).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from agents.models import AgentRun, RunStatus
from config.health import NOT_APPLICABLE, CheckResult, CheckStatus, embedded

REAPER_TICK_KEY = "agents:reaper:last_tick"
REAPER_SILENT_INTERVALS = 3


def reaper_tick_record() -> None:
    """Note that the reaper ran now. Kept until replaced (no expiry): its age is what is checked."""
    cache.set(REAPER_TICK_KEY, timezone.now().timestamp(), timeout=None)


def reaper_last_tick() -> datetime | None:
    stamp = cache.get(REAPER_TICK_KEY)
    return None if stamp is None else datetime.fromtimestamp(float(stamp), tz=UTC)


@dataclass(frozen=True)
class RunsWaiting:
    count: int
    oldest_since: datetime | None  # when the longest-waiting run started to wait


def runs_waiting() -> RunsWaiting:
    """Runs waiting for a worker: queued, or running with no lease (between steps). One aggregate."""
    waiting = AgentRun.objects.waiting().aggregate(count=Count("id"), oldest=Min("updated_at"))
    return RunsWaiting(count=waiting["count"], oldest_since=waiting["oldest"])


def _seconds_since(moment: datetime | None) -> float | None:
    return None if moment is None else round((timezone.now() - moment).total_seconds(), 3)


def reaper_check() -> CheckResult:
    tick = reaper_last_tick()
    if embedded():
        return (
            NOT_APPLICABLE
            if tick is None
            else CheckResult(NOT_APPLICABLE.status, {"last_tick": tick.isoformat()})
        )
    limit = REAPER_SILENT_INTERVALS * settings.AGENT_REAPER_INTERVAL_SECONDS
    silent = _seconds_since(tick)
    status = CheckStatus.OK if silent is not None and silent <= limit else CheckStatus.FAILING
    detail = {
        "last_tick": None if tick is None else tick.isoformat(),
        "silent_seconds": silent,
        "limit_seconds": limit,
    }
    return CheckResult(status, detail)


def queue_check() -> CheckResult:
    if embedded():
        return NOT_APPLICABLE
    waiting = runs_waiting()
    limit = settings.HEALTH_QUEUE_MAX_WAIT_SECONDS
    oldest = _seconds_since(waiting.oldest_since)
    status = CheckStatus.FAILING if oldest is not None and oldest > limit else CheckStatus.OK
    detail = {"waiting_runs": waiting.count, "oldest_wait_seconds": oldest, "limit_seconds": limit}
    return CheckResult(status, detail)


class RunsCollector(Collector):
    """The runs gauges, read from the database at each scrape (so every process reports the same)."""

    def collect(self) -> Iterator[Metric]:
        waiting = runs_waiting()
        leased = AgentRun.objects.filter(status=RunStatus.RUNNING).exclude(lease_owner="").count()
        oldest = _seconds_since(waiting.oldest_since) or 0.0
        yield GaugeMetricFamily(
            "govctx_runs_in_flight", "Runs a worker is executing a step of.", value=leased
        )
        yield GaugeMetricFamily(
            "govctx_runs_waiting", "Runs waiting for a worker (queue depth).", value=waiting.count
        )
        yield GaugeMetricFamily(
            "govctx_oldest_waiting_run_seconds", "How long the longest-waiting run has waited.", value=oldest
        )
