"""Keeping a running step's lease alive: one heartbeat thread per process renews them all.

A lease is short (``AGENT_STEP_LEASE_SECONDS``, 20 s by default) so that a step whose worker died is
resumed by another worker within that time, while a provider call or a tool may take minutes. So a
step holds its lease with :func:`lease_kept` for as long as it runs, and the process's heartbeat
renews every lease held in the process every ``AGENT_STEP_LEASE_RENEW_SECONDS``, in one statement
(:func:`agents.runtime.leases.leases_renew`), on its own database connection. A killed process renews
nothing, so its leases run out within one lease.

A renewal is conditional on the worker still holding the lease at its step; one that finds it gone
stops renewing it (the step may have released it a moment ago, as it moved the run on, paused or
ended it). Renewing is not what keeps a step from running twice: every record of a
step's result first checks, in its own transaction, that its worker still holds the lease
(:func:`agents.runtime.leases.lease_hold`), so a worker that lost it (a pause longer than the lease,
a database unreachable for as long) keeps nothing. No lease is renewed past the task's hard time
limit (``CELERY_TASK_TIME_LIMIT``): a step that outlives it is stuck, and its run is left to the
reaper.

The thread starts with the first lease held in the process (so a forked worker child starts its own)
and sleeps while no step runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connections

from agents.runtime.leases import HeldLease, leases_renew

logger = logging.getLogger(__name__)


class LeaseHeartbeat(threading.Thread):
    """Renews the leases registered with :meth:`hold` every ``interval`` seconds until each is
    released, lost, or past its deadline (``time.monotonic()``)."""

    def __init__(self, interval: float) -> None:
        super().__init__(name="lease-heartbeat", daemon=True)
        self.interval = interval
        self._lock = threading.Lock()
        self._deadlines: dict[HeldLease, float] = {}
        self._stopped = threading.Event()

    def hold(self, lease: HeldLease, *, deadline: float) -> None:
        with self._lock:
            self._deadlines[lease] = deadline

    def release(self, lease: HeldLease) -> None:
        with self._lock:
            self._deadlines.pop(lease, None)

    def held(self) -> tuple[HeldLease, ...]:
        with self._lock:
            return tuple(self._deadlines)

    def run(self) -> None:
        """Beat every ``interval`` until :meth:`stop`. The thread's connection goes back after every
        beat, so an idle heartbeat holds none."""
        while not self._stopped.wait(self.interval):
            try:
                self.beat()
            except Exception:  # a defect must not stop the renewals of every step of the process
                logger.exception("the lease heartbeat's beat failed")
            finally:
                connections.close_all()

    def stop(self) -> None:
        self._stopped.set()

    def beat(self) -> tuple[HeldLease, ...]:
        """Renew the leases held now; return those no longer held. A database error is logged and
        the next beat tries again (a lease outlives one missed beat)."""
        leases = self._due()
        if not leases:
            return ()
        try:
            lost = leases_renew(leases)
        except DatabaseError:
            logger.warning("renewing %d step leases failed; retrying in %ss", len(leases), self.interval)
            return ()
        for lease in lost:
            self.release(lease)
            logger.info("run %s step %s: the lease is no longer held here", lease.run_id, lease.step_index)
        return lost

    def _due(self) -> tuple[HeldLease, ...]:
        """The leases to renew; those past their deadline are dropped (and logged) instead."""
        now = time.monotonic()
        with self._lock:
            late = [lease for lease, deadline in self._deadlines.items() if deadline <= now]
            for lease in late:
                del self._deadlines[lease]
            due = tuple(self._deadlines)
        for lease in late:
            logger.warning(
                "run %s step %s outlived the task time limit; its lease is no longer renewed",
                lease.run_id,
                lease.step_index,
            )
        return due


_heartbeat: list[LeaseHeartbeat] = []  # this process's heartbeat, once started (a fork starts anew)
_start_lock = threading.Lock()


def lease_heartbeat() -> LeaseHeartbeat:
    """This process's heartbeat, started on first use (and again in a forked child, where the
    parent's thread does not run)."""
    with _start_lock:
        if not _heartbeat or not _heartbeat[0].is_alive():
            heartbeat = LeaseHeartbeat(float(settings.AGENT_STEP_LEASE_RENEW_SECONDS))
            heartbeat.start()
            _heartbeat[:] = [heartbeat]
        return _heartbeat[0]


@contextmanager
def lease_kept(lease: HeldLease) -> Iterator[None]:
    """Keep ``lease`` renewed while the block runs (see the module docstring)."""
    heartbeat = lease_heartbeat()
    heartbeat.hold(lease, deadline=time.monotonic() + float(settings.CELERY_TASK_TIME_LIMIT))
    try:
        yield
    finally:
        heartbeat.release(lease)
