"""Retention: how long each kind of stored content is kept, what is due, and the purge
(docs/decisions/0037-backups-upgrades-retention.md).

Each kind has an expiry in days per deployment (settings ``RETENTION_*_DAYS``; 0, the default, keeps
it forever, so an upgrade never purges anything nobody asked to purge). A purge removes content and
keeps accounting: governance events, receipts, usage and cost rows are never touched, so the
governance log verifies after a purge as before it. Each app purges its own rows
(``gateway/services/retention.py``, ``agents/services/retention.py``, ``evaluations/retention.py``);
this module is the one list of kinds, shared by ``manage.py purge_expired``, the periodic task (Celery
beat, every ``RETENTION_PURGE_INTERVAL_SECONDS``) and the admin page that shows what is due.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from agents.services.retention import runs_content_due, runs_content_purge
from evaluations.retention import evaluations_content_due, evaluations_content_purge
from gateway.services.retention import stored_responses_due, stored_responses_purge


def pseudonymization_mappings_purge(*, before: datetime, now: datetime) -> int:
    """Hook for pseudonymization mappings. None is stored today: a mapping lives in its run's
    process and is never kept past it (DESIGN.md §4). Whoever stores one adds its expiry setting and
    its purge here, as a :class:`RetentionKind`; until then there is nothing to purge."""
    return 0


@dataclass(frozen=True)
class RetentionKind:
    """One kind of stored content: its name, the setting of its expiry in days, what it keeps after
    a purge, the rows due before a time, and the purge (how many rows it purged)."""

    name: str
    setting: str
    kept: str
    due: Callable[[datetime], QuerySet]  # type: ignore[type-arg]
    purge: Callable[[datetime, datetime], int]

    @property
    def days(self) -> int:
        return int(getattr(settings, self.setting))


KINDS = (
    RetentionKind(
        name="stored responses",
        setting="RETENTION_STORED_RESPONSES_DAYS",
        kept="the completion's usage and cost record, its governance events",
        due=lambda before: stored_responses_due(before=before),
        purge=lambda before, now: stored_responses_purge(before=before),
    ),
    RetentionKind(
        name="run transcripts",
        setting="RETENTION_RUN_TRANSCRIPTS_DAYS",
        kept="the run, its steps with usage, labels and receipts, its tool-call records, its events",
        due=lambda before: runs_content_due(before=before),
        purge=lambda before, now: runs_content_purge(before=before, now=now),
    ),
    RetentionKind(
        name="evaluation results",
        setting="RETENTION_EVALUATION_RESULTS_DAYS",
        kept="each result's outcome, checks, usage, cost, decision and receipt",
        due=lambda before: evaluations_content_due(before=before),
        purge=lambda before, now: evaluations_content_purge(before=before, now=now),
    ),
)


@dataclass(frozen=True)
class RetentionLine:
    """One kind as it stands: its expiry (None: kept forever), the time before which it is due, and
    how many rows are due now (or were purged, in a purge's report)."""

    kind: RetentionKind
    days: int | None
    before: datetime | None
    rows: int


def _before(kind: RetentionKind, now: datetime) -> datetime | None:
    return now - timedelta(days=kind.days) if kind.days > 0 else None


def retention_plan(*, now: datetime | None = None) -> list[RetentionLine]:
    """What a purge at ``now`` would remove, per kind (one count query per kind with an expiry)."""
    now = now or timezone.now()
    lines = []
    for kind in KINDS:
        before = _before(kind, now)
        rows = kind.due(before).count() if before is not None else 0
        lines.append(RetentionLine(kind=kind, days=kind.days or None, before=before, rows=rows))
    return lines


def retention_purge(*, now: datetime | None = None) -> list[RetentionLine]:
    """Purge every kind past its expiry at ``now``; per kind, how many rows were purged."""
    now = now or timezone.now()
    lines = []
    for kind in KINDS:
        before = _before(kind, now)
        rows = kind.purge(before, now) if before is not None else 0
        lines.append(RetentionLine(kind=kind, days=kind.days or None, before=before, rows=rows))
    pseudonymization_mappings_purge(before=now, now=now)
    return lines
