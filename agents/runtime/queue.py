"""Enqueue the next step of a run once the current transaction commits.

The runtime names the step task rather than importing it: ``agents/tasks.py`` (the Celery interface)
imports the runtime and registers ``run_step_task`` under :data:`RUN_STEP_TASK`, and Celery's registry
resolves the name here, so the import arrow points one way only. The registered task object keeps
``delay_on_commit``.

With a broker the step goes to the Celery workers. Without one (the embedded default, eager tasks) a
step would run inside the call that enqueues it, so ``POST /runs`` would answer only after the whole
loop; instead, with ``AGENT_RUNS_IN_BACKGROUND`` (the default) it runs on a pool of
``AGENT_BACKGROUND_THREADS`` threads in this process, after the commit, exactly as the eager task
would (same task, same claim and lease), and the request answers at once. Each background step
closes its thread's database connection when it ends. On SQLite the request and the steps write in
turn: the database waits for a competing writer (``config/settings/storage.py``), and a step that still
meets a locked database retries as the task asks (``agents/tasks.py``). A step that raises is logged
with its traceback; the run's lease then expires and the reaper's rules apply, as for a worker
that died. Runs still in the pool when the process stops are left to the same rules.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor

from celery.exceptions import Retry
from django.conf import settings
from django.db import close_old_connections, connection, transaction

from config.celery import app

RUN_STEP_TASK = "agents.tasks.run_step_task"
MAX_RETRY_WAIT_SECONDS = 30.0

logger = logging.getLogger(__name__)


def step_enqueue(*, run_id: str, step_index: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER and settings.AGENT_RUNS_IN_BACKGROUND:
        transaction.on_commit(lambda: BACKGROUND.submit(run_id, step_index))
        return
    app.tasks[RUN_STEP_TASK].delay_on_commit(run_id, step_index)


def task_enqueue(name: str, *args: object) -> None:
    """Enqueue the task registered as ``name`` once the transaction commits: to the workers, or, in the
    embedded mode, on the same in-process pool as a run's steps (so the request that started it
    answers at once and its page can show its progress)."""
    if settings.CELERY_TASK_ALWAYS_EAGER and settings.AGENT_RUNS_IN_BACKGROUND:
        transaction.on_commit(lambda: BACKGROUND.submit_task(name, args))
        return
    app.tasks[name].delay_on_commit(*args)


class BackgroundSteps:
    """The in-process pool that runs eager steps (and other tasks, :func:`task_enqueue`) after the
    request that enqueued them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()

    def submit(self, run_id: str, step_index: int) -> None:
        self._submit(_run_step, run_id, step_index)

    def submit_task(self, name: str, args: tuple[object, ...]) -> None:
        """Apply the task registered as ``name`` to ``args`` on the pool (no retries)."""
        self._submit(_run_task, name, args)

    def _submit(self, work: Callable[..., None], *args: object) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=settings.AGENT_BACKGROUND_THREADS, thread_name_prefix="run-step"
                )
            future = self._executor.submit(work, *args)
            self._pending.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)

    def wait(self, timeout: float) -> bool:
        """Wait until no step is queued or running (steps may enqueue further steps); False when
        ``timeout`` seconds passed first."""
        end = time.monotonic() + timeout
        while True:
            with self._lock:
                pending = list(self._pending)
            remaining = end - time.monotonic()
            if not pending or remaining <= 0:
                return not pending
            futures.wait(pending, timeout=min(remaining, 0.1))


def _run_step(run_id: str, step_index: int) -> None:
    """The step task, applied in this thread; a retry it asks for (a busy lease, a dropped or locked
    database) is made here after its countdown, as a worker would, within the task's own limits."""
    close_old_connections()
    retries = 0
    try:
        while True:
            try:
                app.tasks[RUN_STEP_TASK].apply(args=(run_id, step_index), retries=retries, throw=True)
                return
            except Retry as retry:
                retries += 1
                when = retry.when if isinstance(retry.when, int | float) else 1.0
                time.sleep(min(max(when, 0.0), MAX_RETRY_WAIT_SECONDS))
    except Exception:
        logger.exception("background step %s of run %s failed", step_index, run_id)
    finally:
        connection.close()


def _run_task(name: str, args: tuple[object, ...]) -> None:
    close_old_connections()
    try:
        app.tasks[name].apply(args=args, throw=True)
    except Exception:
        logger.exception("background task %s%r failed", name, args)
    finally:
        connection.close()


BACKGROUND = BackgroundSteps()
