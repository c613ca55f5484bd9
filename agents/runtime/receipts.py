"""The receipt of an answer: what was decided for it, for whom, and from what, never its content.

Every completion (native and OpenAI-compatible, whole or streamed), every embedding call and every run
step returns one (docs/governance.md, "What leaves this service"). It names the decision (its id; the
decision's events share the send's correlation id), the call's zone and the receiver's, the reply's
labels, its integrity level with the untrusted sources it was derived from, each source by kind,
identifier (redacted as events are), class and pinned version (a run's history record; null for live
rows), the redactions by kind in what was sent and in the reply, the personal data found by kind (in
what was sent, sent as placeholders, in the reply, and each source it raised above its declared class;
never a value: decision 0039), and the model that served, with the zone the send was routed from when
the configuration's trusted model served it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.runtime.pins import CONFIGURATION, SKILL, SNIPPET
from agents.runtime.plan import SendPlan
from catalog.models import LlmModel
from governance.policy import ContextDecision
from governance.services import identifiers_redacted
from governance.vocabulary import DataClass, Integrity, Outcome, SourceKind, TrustZone

_PINNED_KINDS = {
    SourceKind.SYSTEM_PROMPT: CONFIGURATION,
    SourceKind.SNIPPET: SNIPPET,
    SourceKind.SKILL: SKILL,
}


def answer_receipt(
    *,
    plan: SendPlan,
    decision: ContextDecision,
    served: LlmModel,
    reply_redactions: Mapping[str, int],
    reply_personal_data: Mapping[str, int] | None = None,
    labels: tuple[DataClass, DataClass] | None = None,
) -> dict[str, Any]:
    """The receipt of a permitted send that ``served`` answered (a JSON object, content-free).
    ``labels``: the reply's label and receiver label where the reply raised them (the decision's
    otherwise)."""
    return decision_receipt(
        decision=decision,
        served=served,
        sent_redactions=plan.redactions,
        reply_redactions=reply_redactions,
        routed_from=plan.routed_from,
        versions=_pinned_versions(plan),
        labels=labels,
        personal_data={
            "sent": dict(plan.personal_data),
            "pseudonymized": dict(plan.pseudonyms.counts) if plan.pseudonyms is not None else {},
            "reply": dict(reply_personal_data or {}),
            "raised": _raised(decision),
        },
    )


def decision_receipt(
    *,
    decision: ContextDecision,
    served: LlmModel,
    sent_redactions: Mapping[str, int],
    reply_redactions: Mapping[str, int],
    routed_from: TrustZone | None = None,
    versions: dict[tuple[str, str], int] | None = None,
    labels: tuple[DataClass, DataClass] | None = None,
    personal_data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The receipt of any permitted call that ``served`` answered (a completion's send plan, or an
    embedding call that has none), from its decision, the redactions by kind in what was sent and in
    the reply, the zone it was routed from, the history records its sources were pinned to, the
    reply's labels where it raised them, and the personal data found (none listed: none found)."""
    receiver = decision.receiver
    label, receiver_label = labels or (decision.label, decision.receiver_label)
    return {
        "decision_id": decision.id,
        "zone": decision.zone.value,
        "receiver_zone": receiver.zone.value if receiver is not None else None,
        "declassified_to": receiver.declassified_to.value
        if receiver is not None and receiver.declassified_to is not None
        else None,
        "label": label.value,
        "receiver_label": receiver_label.value,
        "integrity": decision.integrity.value,
        # What a consequential tool call made from this context is held for (agents/runtime/tool_calls.py).
        "untrusted_sources": _untrusted(decision),
        "sources": _sources(decision, versions or {}),
        "redactions": {"sent": dict(sent_redactions), "reply": dict(reply_redactions)},
        "personal_data": personal_data
        or {"sent": {}, "pseudonymized": {}, "reply": {}, "raised": _raised(decision)},
        "model": served.model_id,
        "provider": served.provider.identifier,
        "routed_from": routed_from.value if routed_from is not None else None,
    }


def _sources(decision: ContextDecision, versions: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    """The decision's sources grouped by kind, class, outcome and pinned version, in order of first
    appearance, each group with its identifiers (redacted) in order: a run's long transcript of tool
    results and earlier turns makes a few groups, not one object per message. Built from the
    decision's own groups (one per distinct classification), so only pinned rows are looked at one
    by one. The stored vocabulary values are strings, so they are written as they are."""
    sources = decision.inputs  # the per-source decisions are not built for a receipt
    merged: dict[tuple[SourceKind, DataClass | None, Outcome, int | None], list[int]] = {}
    for group in decision.groups:
        kind, data_class, outcome = group.kind, group.data_class, group.outcome
        if versions and kind in _PINNED_KINDS:
            for position in group.positions:
                version = versions.get((kind, sources[position].identifier))
                merged.setdefault((kind, data_class, outcome, version), []).append(position)
        else:
            merged.setdefault((kind, data_class, outcome, None), []).extend(group.positions)
    receipt = []
    for (kind, data_class, outcome, version), positions in merged.items():
        positions.sort()  # two classifications of one kind, class and outcome may interleave
        identifiers = [sources[position].identifier for position in positions]
        receipt.append(
            {
                "kind": kind,
                "data_class": data_class,
                "outcome": outcome,
                "pinned_version": version,
                # A turn's identifier is ours (transcript[N]); the others are redacted as events are.
                "identifiers": identifiers
                if kind == SourceKind.ASSISTANT_TURN
                else identifiers_redacted(identifiers),
            }
        )
    return receipt


def _untrusted(decision: ContextDecision) -> list[str]:
    """The untrusted sources as ``kind:identifier`` (redacted as events are), in order: what a
    consequential tool call made from this context is held for."""
    untrusted = (g.positions for g in decision.groups if g.integrity == Integrity.UNTRUSTED)
    sources = [decision.inputs[position] for position in sorted(p for group in untrusted for p in group)]
    identifiers = identifiers_redacted([source.identifier for source in sources])
    return [f"{source.kind}:{identifier}" for source, identifier in zip(sources, identifiers, strict=True)]


def _raised(decision: ContextDecision) -> list[dict[str, Any]]:
    """The sources sent at a stricter class than they declared, with what was found in each (kinds
    and counts, never a value): found personal data raised them (decision 0032)."""
    raised = [source for source in decision.inputs if source.declared_class is not None]
    identifiers = identifiers_redacted([source.identifier for source in raised])
    return [
        {
            "kind": source.kind,
            "identifier": identifier,
            "declared_class": source.declared_class,
            "data_class": source.data_class,
            "found": dict(source.personal_data),
        }
        for source, identifier in zip(raised, identifiers, strict=True)
    ]


def _pinned_versions(plan: SendPlan) -> dict[tuple[str, str], int]:
    """(source kind, identifier) → the history record a run's step built the source from."""
    pinned = plan.pinned
    if pinned is None:
        return {}
    by_kind = {kind: source_kind for source_kind, kind in _PINNED_KINDS.items()}
    return {(str(by_kind[pin.kind]), pin.identifier): pin.history_id for pin in pinned.used}
