"""Scores of answers, posted by the client that received them (docs/decisions/0038-scores-datasets-judges.md).

A client scores an answer by the id it was given with it: a completion's ``request_id`` (beside its
receipt) or a run's id. Only what the client itself received can be scored: an unknown id and another
client's read alike (404), and a run that delivered no answer yet has nothing to score (409). The
score takes the answer's label as delivered, its configuration and the configuration's published
version from the stored rows, never from the request; the comment is stored redacted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction

from agents.models import AgentRun
from agents.runtime.pins import CONFIGURATION, Pin
from agents.runtime.redactions import Redactions, redaction_events_record
from catalog.errors import NotVisible
from catalog.models import ApiClient, Configuration
from config.errors import ConflictError
from gateway.models import CompletionRecord, Score, ScoreKind
from governance.services import EventContext
from governance.vocabulary import DataClass, most_sensitive


class NothingToScore(ConflictError):
    """The run has delivered no answer yet."""

    code = "nothing_to_score"


@dataclass(frozen=True)
class ScoreValue:
    """What a client says of an answer: a number, a yes/no or a category, with an optional comment."""

    kind: str
    numeric: float | None = None
    boolean: bool | None = None
    category: str = ""
    name: str = "overall"
    comment: str = ""


@dataclass(frozen=True)
class _Answer:
    completion: CompletionRecord | None
    run: AgentRun | None
    configuration: Configuration
    version: int | None
    label: DataClass


def score_create(
    *, api_client: ApiClient, value: ScoreValue, request_id: str = "", run_id: str = ""
) -> Score:
    """Store ``api_client``'s score of the completion ``request_id`` or the run ``run_id`` (exactly
    one given, which the API checks). Raises :class:`NotVisible` (nothing stored) for an id unknown or
    not the client's, :class:`NothingToScore` for a run that delivered no answer."""
    answer = _completion(api_client, request_id) if request_id else _run(api_client, run_id)
    redactions = Redactions()
    score = Score(
        api_client=api_client,
        completion=answer.completion,
        run=answer.run,
        configuration=answer.configuration,
        configuration_version=answer.version,
        label=answer.label,
        name=value.name,
        kind=value.kind,
        numeric_value=value.numeric if value.kind == ScoreKind.NUMERIC else None,
        boolean_value=value.boolean if value.kind == ScoreKind.BOOLEAN else None,
        category_value=value.category if value.kind == ScoreKind.CATEGORY else "",
        comment=redactions.text(value.comment),
    )
    score.full_clean()
    with transaction.atomic():
        score.save()
    if redactions.counts:
        context = EventContext(
            correlation_id=request_id or run_id,
            configuration=answer.configuration.identifier,
            api_client=api_client.name,
        )
        redaction_events_record(counts=redactions.counts, context=context, zone=None)
    return score


def _completion(api_client: ApiClient, request_id: str) -> _Answer:
    record = (
        CompletionRecord.objects.select_related("configuration")
        .filter(request_id=request_id, api_client=api_client)
        .first()
    )
    if record is None:
        raise NotVisible(f"There is no answer {request_id!r}.", extra={"request_id": request_id})
    # An abandoned completion kept no label: what may have reached the client counts as the most
    # sensitive class, so the score is never read as less sensitive than its answer.
    label = DataClass.parse(record.label) or DataClass.SECRET_ADJACENT
    version = (
        Configuration.history.filter(id=record.configuration_id, history_date__lte=record.created_at)
        .order_by("-history_id")
        .values_list("history_id", flat=True)
        .first()
    )
    return _Answer(record, None, record.configuration, version, label)


def _run(api_client: ApiClient, run_id: str) -> _Answer:
    missing = NotVisible(f"There is no run {run_id!r}.", extra={"run": run_id})
    try:
        pk = uuid.UUID(run_id)
    except (ValueError, AttributeError):
        raise missing from None
    run = AgentRun.objects.select_related("configuration").filter(pk=pk, api_client=api_client).first()
    if run is None:
        raise missing
    delivered = [
        DataClass.parse(raw)
        for raw in run.steps.exclude(receiver_label="").values_list("receiver_label", flat=True)
    ]
    if not delivered:
        raise NothingToScore(f"Run {run_id!r} has delivered no answer yet.", extra={"run": run_id})
    label = most_sensitive([item or DataClass.SECRET_ADJACENT for item in delivered])
    pins = (Pin.of(raw) for raw in run.pins)
    version = next((pin.history_id for pin in pins if pin.kind == CONFIGURATION), None)
    return _Answer(None, run, run.configuration, version, label)
