"""Governance writes: recording events, the one recording check before every provider call, and
promoting classified rows to enforce."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import itemgetter

from django.core.exceptions import ValidationError
from django.db import transaction

from config.caches import cache_register
from config.tracing import traced
from governance.actors import CLASSIFY_SCOPE, RECLASSIFY_PERMISSION, Actor, history_stamp
from governance.chain.writes import CHAIN_FIELDS, event_append
from governance.classified import Classification, ClassifiedBase
from governance.errors import ContextRefused, ReclassifyForbidden
from governance.guardrails.redaction import redact
from governance.models import GovernanceEvent
from governance.policy import ContextDecision, Receiver, Source, SourceDecision, decide, enforcement_mode
from governance.telemetry import (
    decision_span_attributes,
    governance_decision_counted,
    governance_event_counted,
)
from governance.vocabulary import Decision, Enforcement, EnforcementMode, EventOutcome, Outcome, TrustZone

__all__ = [
    "EventContext",
    "PromotionResult",
    "assert_permitted",
    "decide",
    "enforcement_promote",
    "governance_event_record",
    "reclassification_guard",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EventContext:
    """Who and where a decision was made for; copied onto every event."""

    correlation_id: str
    provider: str = ""
    model: str = ""
    configuration: str = ""
    api_client: str = ""
    run: str = ""
    step: int | None = None


def governance_event_record(
    *,
    context: EventContext,
    decision: Decision,
    outcome: EventOutcome,
    source: SourceDecision | None = None,
    zone: TrustZone | None = None,
    reason: str = "",
) -> GovernanceEvent:
    """Append one event to this writer's chain of the log (``governance/chain``). Every free-text
    field (names, identifiers, the reason) is stored redacted: an event never holds a secret, whatever
    a name or identifier was made of. Raises ``RedactionFailed`` when the scanner fails (nothing is
    written then)."""
    event = GovernanceEvent(
        correlation_id=context.correlation_id,
        decision=decision,
        outcome=outcome,
        source_kind=source.kind if source else "",
        source_identifier=_redacted(source.identifier)[:200] if source else "",
        data_class=source.data_class.value if source and source.data_class else "",
        ceiling=source.ceiling.value if source else "",
        zone=zone.value if zone else "",
        reason=_redacted(reason)[:300],
        provider=_redacted(context.provider),
        model=_redacted(context.model),
        configuration=_redacted(context.configuration),
        api_client=_redacted(context.api_client),
        run=context.run,
        step=context.step,
    )
    _event_store(event)
    governance_event_counted(decision=event.decision, outcome=event.outcome)
    return event


def _event_store(event: GovernanceEvent) -> None:
    """Validate ``event`` (its chain fields are set by the append) and append it to the log."""
    event.full_clean(exclude=CHAIN_FIELDS)
    event_append(event)


def enforced_event_record(
    *, context: EventContext, decision: Decision, reason: str, zone: TrustZone | None = None
) -> GovernanceEvent:
    """Append an ``enforced`` event of ``decision``: a rule acted on the request (no source named)."""
    return governance_event_record(
        context=context, decision=decision, outcome=EventOutcome.ENFORCED, zone=zone, reason=reason
    )


def identifiers_redacted(texts: list[str]) -> list[str]:
    """Identifiers, names or reasons as events store them: each redacted (memoized per worker)."""
    return [_redacted(text) for text in texts]


def _redacted(text: str) -> str:
    """``text`` redacted; short texts (identifiers, names, reasons) from this worker's memo, since a
    decision lists the same identifiers on every call and a redaction is a pure function of the text."""
    if not text:
        return text
    if len(text) > _MEMO_MAX_CHARS:
        return redact(text).text
    return _redacted_short(text)


_MEMO_MAX_CHARS = 512


def _redacted_by_redact(text: str) -> str:
    return redact(text).text


_redacted_short = cache_register(
    lru_cache(maxsize=4096)(_redacted_by_redact),
    name="redacted_identifiers",
    key=f"the text itself (up to {_MEMO_MAX_CHARS} characters: identifiers, names and reasons of decisions "
    "and events)",
    invalidation="none needed: a redaction is a pure function of the text (and of the detectors' code)",
)


@traced("governance.decision", result_attributes=decision_span_attributes)
def assert_permitted(
    *,
    sources: list[Source] | tuple[Source, ...],
    zone: TrustZone,
    context: EventContext,
    mode: EnforcementMode | None = None,
    receiver: Receiver | None = None,
) -> ContextDecision:
    """Decide (for the call's ``zone`` and the ``receiver`` of its reply, when there is one), record
    an event for every refused and observed source, and raise on refusal. The decision returned
    carries a new ``id`` (the receipt names it) and the reply's labels.

    Raises :class:`ContextRefused` naming the first refused source (never its text) and, when the
    receiver's zone refused it, the receiver. Fail-closed:
    a refusal whose event cannot be written is still a refusal (the failure is logged); an observed
    source whose event cannot be written is refused, since we do not send what we cannot account for.

    Precondition: call outside any transaction that the refusal would roll back, or the events are
    lost with it.
    """
    decision = decide(sources, zone, mode if mode is not None else enforcement_mode(), receiver)
    decision = replace(decision, id=uuid.uuid4().hex)
    unaccounted: list[SourceDecision] = []
    for item in decision.acted_on:
        enforced = item.outcome == Outcome.REFUSED
        try:
            governance_event_record(
                context=context,
                decision=Decision.CONTEXT_BLOCKED,
                outcome=EventOutcome.ENFORCED if enforced else EventOutcome.OBSERVED,
                source=item,
                zone=receiver.zone if item.by_receiver and receiver is not None else zone,
                reason=item.reason,
            )
        except Exception:
            logger.exception("governance event for %s %r could not be written", item.kind, item.identifier)
            if not enforced:
                unaccounted.append(item)
    governance_decision_counted(decision, unaccounted=bool(unaccounted))
    if decision.refused:
        first = decision.refused[0]
        where = "delivered to the receiver" if first.by_receiver else f"sent to zone {zone.value}"
        raise ContextRefused(
            _redacted(f"{first.kind} {first.identifier!r} may not be {where}: {first.reason}."),
            extra={"decision": decision_as_dict(decision)},
        )
    if unaccounted:
        first = unaccounted[0]
        raise ContextRefused(
            _redacted(
                f"{first.kind} {first.identifier!r} was refused: its observed event could not be recorded."
            ),
            extra={"decision": decision_as_dict(decision)},
        )
    return decision


def decision_as_dict(decision: ContextDecision) -> dict[str, object]:
    """A JSON-safe rendering of a decision (identifiers, redacted, and classes; never content)."""
    receiver = decision.receiver
    return {
        "zone": decision.zone.value,
        "mode": decision.mode.value,
        "permitted": decision.permitted,
        "receiver": None
        if receiver is None
        else {
            "zone": receiver.zone.value,
            "declassified_to": receiver.declassified_to.value if receiver.declassified_to else None,
        },
        "label": decision.label.value,
        "receiver_label": decision.receiver_label.value,
        "sources": _sources_as_dicts(decision),
    }


def _sources_as_dicts(decision: ContextDecision) -> list[dict[str, object]]:
    """Each source's decision as JSON, in the order given: the verdict rendered once per group of
    sources that share it (a long conversation is a few groups), then each source's kind and redacted
    identifier added to a copy of it."""
    placed: list[tuple[int, dict[str, object]]] = []
    inputs = decision.inputs
    for group in decision.groups:
        data_class, ceiling, enforcement, outcome, reason, by_receiver = group.verdict
        verdict = {
            "data_class": data_class.value if data_class else None,
            "ceiling": ceiling.value,
            "enforcement": enforcement.value,
            "outcome": outcome.value,
            "reason": reason,
            "by_receiver": by_receiver,
        }
        for position in group.positions:
            source = inputs[position]
            placed.append(
                (position, {"kind": str(source.kind), "identifier": _redacted(source.identifier), **verdict})
            )
    placed.sort(key=itemgetter(0))
    return [rendered for _, rendered in placed]


@dataclass(frozen=True)
class PromotionResult:
    """What a promotion of observe rows to enforce did: every row is either promoted or skipped with
    a reason, never silently left out."""

    promoted: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (identifier, reason)


ALREADY_ENFORCED = "already enforced"
UNDECLARED = "declare a data class and a ceiling first"


def enforcement_promote(*, rows: Sequence[ClassifiedBase], actor: Actor) -> PromotionResult:
    """Switch each observed row of ``rows`` (snippets, skills, configuration prompts) to enforce.

    Each row is re-read under a lock and promoted in its own transaction, recorded as a history
    version naming ``actor`` where the model keeps history. A row without a declared class and
    ceiling cannot be enforced, and an enforced row needs nothing: both are skipped with that
    reason, never silently. Promotion only tightens, so it needs no privilege.
    """
    promoted: list[str] = []
    skipped: list[tuple[str, str]] = []
    for row in rows:
        with transaction.atomic():
            locked = type(row)._default_manager.select_for_update().get(pk=row.pk)
            reason = _promotion_refusal(locked)
            if reason is None:
                before = locked.classification
                locked.classify(replace(before, enforcement=Enforcement.ENFORCE))
                locked.full_clean()
                history_stamp(locked, actor=actor, reason="promoted to enforce")
                locked.save()
                reclassification_record(row=locked, before=before, actor=actor)
        if reason is None:
            promoted.append(locked.identifier)
            logger.info("%s %s promoted to enforce by %s", row.source_kind, locked.identifier, actor.label)
        else:
            skipped.append((locked.identifier, reason))
    return PromotionResult(promoted=tuple(promoted), skipped=tuple(skipped))


def _promotion_refusal(row: ClassifiedBase) -> str | None:
    current = row.classification
    if current.enforcement == Enforcement.ENFORCE:
        return ALREADY_ENFORCED
    if not current.data_class or not current.ceiling:
        return UNDECLARED
    return None


LOOSENING = {
    "data_class": "Lowering the data class",
    "ceiling": "Loosening the trust-zone ceiling",
    "enforcement": "Relaxing enforce to observe",
}
NEW_ROWS_ENFORCE = "A new row enforces: observe is only for rows that predate classification."


def reclassification_refusal(
    *, before: Classification, after: Classification, actor: Actor
) -> dict[str, str]:
    """Why ``actor`` may not change ``before`` to ``after``, by unprefixed field; empty when it may.

    Only a change that lets content go further (see :meth:`Classification.loosened_by`) is
    privileged; a stricter change is anyone's to make.
    """
    loosened = before.loosened_by(after)
    if not loosened or actor.may_declassify:
        return {}
    privilege = f"the {CLASSIFY_SCOPE} scope or the {RECLASSIFY_PERMISSION} permission"
    return {field: f"{LOOSENING[field]} needs {privilege}." for field in loosened}


@contextmanager
def reclassification_guard(*, row: ClassifiedBase, actor: Actor) -> Iterator[None]:
    """Wrap the save of ``row`` (new or changed): refuse what ``actor`` may not do, record what changed.

    Before the body runs, the stored row is read under a lock: a change that lowers its class,
    loosens its ceiling or relaxes enforcement raises :class:`ReclassifyForbidden` unless ``actor``
    may declassify, and a new row that does not enforce raises ``ValidationError``; either way
    nothing is stored. After the body saved the row, any change of its classification is recorded as
    a ``reclassified`` event. All of it is one transaction: a change whose event cannot be written is
    not stored.
    """
    with transaction.atomic():
        before = _stored_classification(row)
        after = row.classification
        if before is None and after.enforcement != Enforcement.ENFORCE:
            raise ValidationError({row.classification_field("enforcement"): NEW_ROWS_ENFORCE})
        refusal = {} if before is None else reclassification_refusal(before=before, after=after, actor=actor)
        if refusal:
            fields = [row.classification_field(field) for field in refusal]
            raise ReclassifyForbidden(
                f"{row.source_kind} {row.identifier!r}: {' '.join(refusal.values())}",
                extra={"fields": fields, "required_scope": CLASSIFY_SCOPE},
            )
        yield
        reclassification_record(row=row, before=before, actor=actor)


def _stored_classification(row: ClassifiedBase) -> Classification | None:
    if row.pk is None:
        return None
    stored = type(row)._default_manager.select_for_update().filter(pk=row.pk).first()
    return stored.classification if stored is not None else None


def reclassification_record(
    *, row: ClassifiedBase, before: Classification | None, actor: Actor
) -> GovernanceEvent | None:
    """A ``reclassified`` event when ``row`` (as saved) is classified otherwise than ``before``.

    It names the row, the actor (an API client in ``api_client``; anyone in the reason) and the
    classification before and after, redacted like every event; never content. None when nothing
    changed or the row is new.
    """
    after = row.classification
    if before is None or before == after:
        return None
    event = GovernanceEvent(
        correlation_id=uuid.uuid4().hex,
        decision=Decision.RECLASSIFIED,
        outcome=EventOutcome.OBSERVED if after.enforcement == Enforcement.OBSERVE else EventOutcome.ENFORCED,
        source_kind=row.source_kind,
        source_identifier=_redacted(row.identifier)[:200],
        data_class=after.data_class,
        ceiling=after.ceiling,
        reason=_redacted(f"{before} -> {after} by {actor.label}")[:300],
        api_client=_redacted(actor.api_client),
    )
    _event_store(event)
    logger.info(
        "%s %s reclassified %s -> %s by %s", row.source_kind, row.identifier, before, after, actor.label
    )
    return event
