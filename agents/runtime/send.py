"""One governed send: govern → redact → fit → guard → call → redact the reply. Nothing here persists
a run.

The agent loop records what this returns as a step; the completions API returns it to the caller.
Both therefore pass the same check, the same fit, the same redaction and the same guard pass over the
serialised body (:mod:`agents.providers.guard`) before any provider call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agents.errors import ModelInactive
from agents.models import LlmModel
from agents.providers.base import PromptLayout, ProviderCall, ProviderError, ProviderReply
from agents.providers.dispatch import complete_with_fallbacks
from agents.providers.guard import LateRedaction, LateRedactionOverflow, WireGuard
from agents.runtime.plan import REDACTION_MEMO, Redactions, SendPlan, redaction_events_record
from context_assembly.estimator import Estimator
from context_assembly.fitting import FitResult, fit
from governance.errors import ContextRefused
from governance.services import EventContext, assert_permitted, governance_event_record
from governance.vocabulary import Decision, EventOutcome


@dataclass(frozen=True)
class SendOutcome:
    """Exactly one of: ``refusal`` (nothing fitted or sent), overflow (fitted, not sent), ``failure``
    (sent, the provider failed), or ``reply`` (redacted) with the model that ``served`` it."""

    plan: SendPlan
    fitted: FitResult | None = None
    reply: ProviderReply | None = None
    served: LlmModel | None = None
    refusal: ContextRefused | None = None
    failure: ProviderError | None = None
    inactive: ModelInactive | None = None

    @property
    def overflow(self) -> bool:
        return self.fitted is not None and self.fitted.overflow


def governed_send(plan: SendPlan, events: EventContext, *, max_tokens: int | None = None) -> SendOutcome:
    """Check every source against the zone (recording events), then fit and call. Never raises for a
    refusal, an overflow or a provider failure: the outcome says which happened."""
    if not plan.targets:
        return SendOutcome(plan=plan, inactive=model_inactive_record(plan=plan, context=events))
    try:
        assert_permitted(sources=plan.sources, zone=plan.zone, context=events)
    except ContextRefused as refusal:
        return SendOutcome(plan=plan, refusal=refusal)
    redaction_events_record(counts=plan.redactions, context=events, zone=plan.zone)
    estimator = Estimator(plan.profile)
    fitted = fit(plan.assembled, estimator=estimator, max_tokens=max_tokens)
    if fitted.overflow:
        return SendOutcome(plan=plan, fitted=fitted)
    call = ProviderCall(
        model_id=plan.model.model_id,
        messages=fitted.messages,
        tool_specs=plan.assembled.tool_specs,
        max_tokens=fitted.breakdown.reserve,
        layout=PromptLayout.of(plan.assembled),
    )
    try:
        result = complete_with_fallbacks(plan.targets, call, guard=_guard(plan, estimator, fitted, events))
    except LateRedactionOverflow as overflow:
        return SendOutcome(plan=plan, fitted=_over_budget(fitted, overflow.late.estimated))
    except ProviderError as failure:
        return SendOutcome(plan=plan, fitted=fitted, failure=failure)
    return SendOutcome(
        plan=plan,
        fitted=fitted,
        reply=_redacted_reply(result.reply, plan, events),
        served=_served_model(plan, result.served_index),
    )


def model_inactive_record(*, plan: SendPlan, context: EventContext) -> ModelInactive:
    """Record that nothing could be sent because every target is switched off; the error to answer."""
    governance_event_record(
        context=context,
        decision=Decision.MODEL_INACTIVE,
        outcome=EventOutcome.ENFORCED,
        zone=plan.zone,
        reason=f"no active target among {', '.join(plan.inactive)}",
    )
    return ModelInactive(
        f"Configuration '{plan.configuration.identifier}' has no active model: its model, its fallbacks "
        "or their providers are switched off. Nothing was sent.",
        extra={"inactive": list(plan.inactive)},
    )


def _guard(plan: SendPlan, estimator: Estimator, fitted: FitResult, events: EventContext) -> WireGuard:
    return WireGuard(
        scanner=REDACTION_MEMO,
        estimator=estimator,
        budget=fitted.breakdown.budget,
        on_late_redaction=lambda late: late_redaction_record(late=late, plan=plan, context=events),
    )


def late_redaction_record(*, late: LateRedaction, plan: SendPlan, context: EventContext) -> None:
    """The ``late_redaction`` event of a body the guard had to redact: the target, the kinds and counts,
    never a value. Raises when it cannot be written, so nothing unaccounted for is sent."""
    counts = ", ".join(f"{count} x {kind}" for kind, count in late.counts.items())
    target = plan.targets[late.target_index].model_id if late.target_index < len(plan.targets) else ""
    governance_event_record(
        context=context,
        decision=Decision.LATE_REDACTION,
        outcome=EventOutcome.ENFORCED,
        zone=plan.zone,
        reason=f"target {late.target_index} ({late.provider}/{target}): {counts}",
    )


def _over_budget(fitted: FitResult, estimated: int) -> FitResult:
    """``fitted`` marked as overflowing at ``estimated`` tokens: the change a late redaction made is
    charged to the transcript line (it may come from any part), so the lines still sum exactly."""
    breakdown = fitted.breakdown
    delta = estimated - breakdown.estimated
    over = replace(
        breakdown,
        transcript=breakdown.transcript + delta,
        estimated=estimated,
        remaining=breakdown.budget - estimated,
    )
    return replace(fitted, overflow=True, breakdown=over)


def _served_model(plan: SendPlan, index: int) -> LlmModel:
    if index == 0:
        return plan.model
    return plan.fallbacks[index - 1]


def _redacted_reply(reply: ProviderReply, plan: SendPlan, events: EventContext) -> ProviderReply:
    redactions = Redactions()
    text = redactions.text(reply.text)
    calls = redactions.tool_calls(reply.tool_calls)
    redaction_events_record(counts=redactions.counts, context=events, zone=plan.zone)
    return ProviderReply(
        text=text,
        tool_calls=calls,
        finish_reason=reply.finish_reason,
        usage=reply.usage,
        model_id=reply.model_id,
        response_id=reply.response_id,
    )
