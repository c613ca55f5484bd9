"""Anchoring in the embedded default, which has no Celery beat.

A serving process starts :class:`EmbeddedAnchorer` (through ``SERVING_STARTED_HOOKS``, as the
embedded reaper): a daemon thread that anchors every chain's head at once (what a stopped server
left unanchored) and then every ``GOVERNANCE_LOG_ANCHOR_SECONDS``, as beat does in the real mode.
Tests, migrations and other management commands import no server module, so they start no thread.
"""

from __future__ import annotations

import threading

from django.conf import settings

from config.health import embedded
from config.periodic import PeriodicThread
from governance.chain.writes import anchor_record


class EmbeddedAnchorer(PeriodicThread):
    """Anchors at once, then every ``interval`` seconds until :meth:`stop` (an anchoring that raises
    is logged and the next one still runs)."""

    def __init__(self, interval: float) -> None:
        super().__init__(name="governance-log-anchorer", interval=interval)

    def tick(self) -> None:
        anchor_record()


_started: list[EmbeddedAnchorer] = []  # the process's anchorer, once started
_start_lock = threading.Lock()


def embedded_anchorer_start() -> EmbeddedAnchorer | None:
    """Start this process's anchorer, once; None in the real mode (Celery beat anchors)."""
    if not embedded():
        return None
    with _start_lock:
        if not _started:
            anchorer = EmbeddedAnchorer(float(settings.GOVERNANCE_LOG_ANCHOR_SECONDS))
            anchorer.start()
            _started.append(anchorer)
        return _started[0]
