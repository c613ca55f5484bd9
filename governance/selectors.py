"""Reads of the governance event log."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from governance.models import GovernanceEvent


@dataclass(frozen=True)
class EventReader:
    """Who reads the log from outside: an API client's name and the configurations it may use.

    The log stores names, not foreign keys, so the reader is described by names too.
    """

    api_client: str
    configurations: frozenset[str]


def _visible_to(reader: EventReader) -> Q:
    """A reader sees the events of its own requests, and the events of no client's request (a
    management command, an admin preview) on a configuration it may use. Another client's request is
    never visible, not even on a shared configuration; an event naming neither a client nor one of the
    reader's configurations (an editor's save) is not visible either."""
    own = Q(api_client=reader.api_client) if reader.api_client else Q(pk__in=[])
    clientless = Q(api_client="", configuration__in=sorted(reader.configurations))
    return own | clientless


def governance_event_list(
    *,
    reader: EventReader,
    decision: str | None = None,
    outcome: str | None = None,
    configuration: str | None = None,
    source_kind: str | None = None,
    run: str | None = None,
) -> QuerySet[GovernanceEvent]:
    """The events ``reader`` may see that match every given filter, newest first. Events never hold
    content."""
    events = GovernanceEvent.objects.filter(_visible_to(reader))
    filters = {
        "decision": decision,
        "outcome": outcome,
        "configuration": configuration,
        "source_kind": source_kind,
        "run": run,
    }
    return events.filter(**{field: value for field, value in filters.items() if value is not None})
