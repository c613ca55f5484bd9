"""Reads of the governance event log."""

from __future__ import annotations

from django.db.models import QuerySet

from governance.models import GovernanceEvent


def governance_event_list(
    *,
    decision: str | None = None,
    outcome: str | None = None,
    configuration: str | None = None,
    source_kind: str | None = None,
    run: str | None = None,
) -> QuerySet[GovernanceEvent]:
    """Events matching every given filter, newest first. Events never hold content."""
    events = GovernanceEvent.objects.all()
    filters = {
        "decision": decision,
        "outcome": outcome,
        "configuration": configuration,
        "source_kind": source_kind,
        "run": run,
    }
    return events.filter(**{field: value for field, value in filters.items() if value is not None})
