"""Tasks that exist only for the services suite, loaded into the worker with ``-I``."""

from __future__ import annotations

import time

from celery import shared_task

from governance.services import EventContext, governance_event_record
from governance.vocabulary import Decision, EventOutcome


def _write(correlation_id: str, reason: str = "") -> None:
    governance_event_record(
        context=EventContext(correlation_id=correlation_id),
        decision=Decision.CONTEXT_BLOCKED,
        outcome=EventOutcome.OBSERVED,
        reason=reason,
    )


@shared_task(acks_late=True, reject_on_worker_lost=True)
def write_row(correlation_id: str) -> None:
    _write(correlation_id)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def slow_write(self, correlation_id: str, seconds: float) -> None:
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    _write(f"{correlation_id}:started", "redelivered" if redelivered else "first delivery")
    time.sleep(seconds)
    _write(correlation_id)
