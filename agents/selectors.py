"""Reads for the agents app."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from agents.models import AgentRun
from catalog.models import ApiClient


def run_client_name(run: AgentRun) -> str:
    """The name of the API client that started ``run`` ("" for none); no query for a claimed run,
    whose claim read the name (``AgentRun.objects.claim``)."""
    client = run.api_client
    return client.name if client is not None else ""


def run_list_for_client(*, api_client: ApiClient) -> QuerySet[AgentRun]:
    """The client's own runs, newest first. Runs of other clients and of no client are never included."""
    return AgentRun.objects.filter(api_client=api_client).select_related("configuration__model")


def run_get_for_client(*, api_client: ApiClient, run_id: str) -> AgentRun | None:
    """The run with its steps and transcript, or None when the id is malformed, unknown, or the run
    belongs to someone else."""
    try:
        pk = uuid.UUID(run_id)
    except (ValueError, AttributeError):
        return None
    return (
        run_list_for_client(api_client=api_client)
        .prefetch_related("steps__model", "messages")
        .filter(pk=pk)
        .first()
    )
