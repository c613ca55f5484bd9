"""Governance writes: recording events and the one recording check before every provider call."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from governance.errors import ContextRefused
from governance.models import GovernanceEvent
from governance.policy import ContextDecision, Source, SourceDecision, decide, enforcement_mode
from governance.vocabulary import Decision, EnforcementMode, EventOutcome, Outcome, TrustZone

__all__ = ["EventContext", "assert_permitted", "decide", "governance_event_record"]

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
    event = GovernanceEvent(
        correlation_id=context.correlation_id,
        decision=decision,
        outcome=outcome,
        source_kind=source.kind if source else "",
        source_identifier=source.identifier[:200] if source else "",
        data_class=source.data_class.value if source and source.data_class else "",
        ceiling=source.ceiling.value if source else "",
        zone=zone.value if zone else "",
        reason=reason[:300],
        provider=context.provider,
        model=context.model,
        configuration=context.configuration,
        api_client=context.api_client,
        run=context.run,
        step=context.step,
    )
    event.full_clean()
    event.save()
    return event


def assert_permitted(
    *,
    sources: list[Source] | tuple[Source, ...],
    zone: TrustZone,
    context: EventContext,
    mode: EnforcementMode | None = None,
) -> ContextDecision:
    """Decide, record an event for every refused and observed source, and raise on refusal.

    Raises :class:`ContextRefused` naming the first refused source (never its text). Fail-closed:
    a refusal whose event cannot be written is still a refusal (the failure is logged); an observed
    source whose event cannot be written is refused, since we do not send what we cannot account for.

    Precondition: call outside any transaction that the refusal would roll back, or the events are
    lost with it.
    """
    decision = decide(sources, zone, mode if mode is not None else enforcement_mode())
    unaccounted: list[SourceDecision] = []
    for item in decision.sources:
        if item.outcome == Outcome.ALLOWED:
            continue
        enforced = item.outcome == Outcome.REFUSED
        try:
            governance_event_record(
                context=context,
                decision=Decision.CONTEXT_BLOCKED,
                outcome=EventOutcome.ENFORCED if enforced else EventOutcome.OBSERVED,
                source=item,
                zone=zone,
                reason=item.reason,
            )
        except Exception:
            logger.exception("governance event for %s %r could not be written", item.kind, item.identifier)
            if not enforced:
                unaccounted.append(item)
    if decision.refused:
        first = decision.refused[0]
        raise ContextRefused(
            f"{first.kind} {first.identifier!r} may not be sent to zone {zone.value}: {first.reason}.",
            extra={"decision": decision_as_dict(decision)},
        )
    if unaccounted:
        first = unaccounted[0]
        raise ContextRefused(
            f"{first.kind} {first.identifier!r} was refused: its observed event could not be recorded.",
            extra={"decision": decision_as_dict(decision)},
        )
    return decision


def decision_as_dict(decision: ContextDecision) -> dict[str, object]:
    """A JSON-safe rendering of a decision (names and classes only, never content)."""
    return {
        "zone": decision.zone.value,
        "mode": decision.mode.value,
        "permitted": decision.permitted,
        "sources": [
            {
                "kind": str(s.kind),
                "identifier": s.identifier,
                "data_class": s.data_class.value if s.data_class else None,
                "ceiling": s.ceiling.value,
                "enforcement": s.enforcement.value,
                "outcome": s.outcome.value,
                "reason": s.reason,
            }
            for s in decision.sources
        ],
    }


@dataclass(frozen=True)
class PromotionResult:
    """What a promotion of observe rows to enforce did: every row is either promoted or skipped with
    a reason, never silently left out."""

    promoted: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (identifier, reason)
