"""Periodic work of the governance log: anchoring every chain's head (beat, every
``GOVERNANCE_LOG_ANCHOR_SECONDS``)."""

from __future__ import annotations

from celery import shared_task

from governance.chain.writes import anchor_record


@shared_task(name="governance.tasks.governance_log_anchor_task", ignore_result=True)
def governance_log_anchor_task() -> int | None:
    """Anchor the heads of every chain; the new anchor's position, or None when no head moved."""
    anchor = anchor_record()
    return anchor.seq if anchor is not None else None
