"""Purging stored Responses past their retention (editors/retention.py schedules it).

A stored response is content through and through (the conversation a client may continue), so it is
deleted whole; a ``previous_response_id`` naming it is then answered as unknown. What accounts for
the call stays: its ``CompletionRecord`` (usage and cost) and its governance events.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from gateway.models import StoredResponse


def stored_responses_due(*, before: datetime) -> QuerySet[StoredResponse]:
    return StoredResponse.objects.filter(created_at__lt=before)


def stored_responses_purge(*, before: datetime) -> int:
    """Delete the stored responses created before ``before``; how many."""
    deleted, _ = stored_responses_due(before=before).delete()
    return deleted
