"""The clock of the embedded default's background duties.

The real mode has Celery beat; the embedded default (no broker, tasks in-process) has none, so a
serving process runs each periodic duty in a daemon thread of its own: :class:`PeriodicThread` ticks
at once (what a stopped server left behind) and then every ``interval`` seconds until :meth:`stop`.
A tick that raises is logged and the next one still runs; the thread's database connections are
closed after each tick, so an idle thread holds none.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod

from django.db import connections

logger = logging.getLogger(__name__)


class PeriodicThread(threading.Thread, ABC):
    """Calls :meth:`tick` at once, then every ``interval`` seconds until :meth:`stop`."""

    def __init__(self, *, name: str, interval: float) -> None:
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self._stopped = threading.Event()

    @abstractmethod
    def tick(self) -> None:
        """One round of the duty (a subclass's: the reaper's sweep, the anchorer's anchor)."""

    def run(self) -> None:
        while True:
            self.tick_guarded()
            if self._stopped.wait(self.interval):
                return

    def tick_guarded(self) -> None:
        try:
            self.tick()
        except Exception:
            logger.exception("the %s thread's tick failed", self.name)
        finally:
            connections.close_all()

    def stop(self) -> None:
        self._stopped.set()
