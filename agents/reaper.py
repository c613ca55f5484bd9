"""The reaper's sweep (:func:`reap_sweep`), and its clock in the embedded default.

In the real mode Celery beat runs the sweep (``agents.tasks.reap_runs_task``) every
``AGENT_REAPER_INTERVAL_SECONDS``. The embedded default has no beat: a serving process starts
:class:`EmbeddedReaper`, a daemon thread (``config.periodic``) that sweeps once at once (the runs
a stopped server left behind) and then every interval. It is started by ``config/wsgi.py`` and ``config/asgi.py``
(through ``SERVING_STARTED_HOOKS``), which only a server imports — ``runserver`` when it starts
serving, or a WSGI/ASGI server — so tests, migrations and other management commands start no
thread. Tasks are eager there, so a requeued step runs in the reaper's thread.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings

from agents.health import reaper_tick_record
from agents.metrics import reap_counted
from agents.runtime.leases import ReapResult, runs_reap
from agents.runtime.queue import step_enqueue
from agents.services.approvals import approvals_expire
from config.health import embedded
from config.periodic import PeriodicThread

logger = logging.getLogger(__name__)


def reap_sweep() -> ReapResult:
    """Requeue or end the runs nothing else will move (:func:`agents.runtime.leases.runs_reap`), send
    each requeued step's message, count both, expire the tool approvals past their time, and record
    the tick. A message that cannot be sent is
    logged and the sweep goes on: the run, requeued at this moment, is found again a bound later."""
    result = runs_reap()
    for requeue in result.requeued:
        logger.warning(
            "run %s requeued at step %s (%s)", requeue.run_id, requeue.step_index, requeue.cause.value
        )
        reap_counted(action="requeued", cause=requeue.cause.value)
        try:
            step_enqueue(run_id=requeue.run_id, step_index=requeue.step_index)
        except Exception:
            logger.exception(
                "the requeued step %s of run %s could not be sent", requeue.step_index, requeue.run_id
            )
    for ended in result.failed:
        logger.warning("run %s failed: requeue_limit (%s)", ended.run_id, ended.cause.value)
        reap_counted(action="failed", cause=ended.cause.value)
    _approvals_expire()
    reaper_tick_record()
    return result


def _approvals_expire() -> None:
    """Expire the tool approvals nobody decided in time; their runs resume with a refusal
    (agents/services/approvals.py). A failure is logged and the sweep goes on: the approvals are
    found again at the next tick."""
    try:
        expired = approvals_expire()
    except Exception:
        logger.exception("expiring tool approvals failed")
        return
    for item in expired:
        logger.warning("approval %s of run %s expired", item.approval_id, item.run_id)


class EmbeddedReaper(PeriodicThread):
    """Sweeps at once, then every ``interval`` seconds until :meth:`stop` (a sweep that raises is
    logged and the next one still runs)."""

    def __init__(self, interval: float) -> None:
        super().__init__(name="embedded-reaper", interval=interval)

    def tick(self) -> None:
        reap_sweep()


_started: list[EmbeddedReaper] = []  # the process's reaper, once started
_start_lock = threading.Lock()


def embedded_reaper_start() -> EmbeddedReaper | None:
    """Start this process's embedded reaper, once; None in the real mode (Celery beat reaps)."""
    if not embedded():
        return None
    with _start_lock:
        if not _started:
            reaper = EmbeddedReaper(float(settings.AGENT_REAPER_INTERVAL_SECONDS))
            reaper.start()
            _started.append(reaper)
        return _started[0]
