"""Purging the content of finished runs past their retention (editors/retention.py schedules it).

A purged run keeps what accounts for it and loses what it said: its transcript (``RunMessage`` rows),
its request (input, caller context, conversation), its tool approvals' arguments and its summaries'
text go; the run row with its status, totals and pins, its steps with their usage, labels and
content-free receipts, its tool-call records and every governance event stay. The governance log
holds no content, so a purge never touches it and it still verifies.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet

from agents.models import AgentRun, AgentStep, RunMessage, ToolApproval
from agents.models.runs import TERMINAL_STATUSES

# Runs purged per transaction: short transactions, so a purge never holds the runs' table for long.
PURGE_BATCH = 500


def runs_content_due(*, before: datetime) -> QuerySet[AgentRun]:
    """Runs that finished before ``before`` and still hold their content. A run still in flight is
    never due, however old."""
    return AgentRun.objects.filter(
        status__in=TERMINAL_STATUSES, finished_at__lt=before, content_purged_at__isnull=True
    )


def runs_content_purge(*, before: datetime, now: datetime) -> int:
    """Purge the content of every run :func:`runs_content_due` names (see the module docstring), in
    transactions of at most ``PURGE_BATCH`` runs; how many runs were purged."""
    purged = 0
    while True:
        with transaction.atomic():
            batch = list(runs_content_due(before=before).values_list("id", flat=True)[:PURGE_BATCH])
            if not batch:
                return purged
            RunMessage.objects.filter(run_id__in=batch).delete()
            ToolApproval.objects.filter(run_id__in=batch).update(arguments="")
            for step in AgentStep.objects.filter(run_id__in=batch, compaction__has_key="summary"):
                step.compaction = {key: value for key, value in step.compaction.items() if key != "summary"}
                step.save(update_fields=["compaction"])
            purged += AgentRun.objects.filter(id__in=batch).update(
                input_text="", caller_context=[], conversation={}, content_purged_at=now
            )
