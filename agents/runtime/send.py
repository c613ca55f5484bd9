"""One governed send: govern → redact → fit → guard → call → redact the reply. Nothing here persists
a run.

The agent loop records what this returns as a step; the completions API returns it to the caller.
Both therefore pass the same check, the same fit, the same redaction and the same guard pass over the
serialised body (:mod:`agents.providers.guard`) before any provider call.

The fit is made for each target with that target's own profile (window, output limit, tokenizer,
calibration) by the one estimator (docs/decisions/0001-fallbacks-are-models.md): the serving model's
first, which decides whether anything may be sent at all; a fallback's only when the walk reaches it.
A fallback whose window cannot hold the context's floor is skipped, never sent a prompt it cannot
take, and the skip is reported with its figures. The reply limit is the request's ``max_tokens``
clamped to each target's output limit (the clamp is reported); a request asking for more than every
target allows is refused before anything is stored or sent (:func:`reply_limit_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from agents.errors import BudgetExhausted, MaxTokensTooLarge, ModelInactive
from agents.models import LlmModel
from agents.providers.dispatch import (
    PreparedCall,
    TargetSkipped,
    complete_with_fallbacks,
    stream_with_fallbacks,
)
from agents.providers.failures import ProviderError
from agents.providers.guard import LateRedaction, LateRedactionOverflow, WireGuard
from agents.providers.values import PromptLayout, ProviderCall, ProviderReply
from agents.runtime.budget import Reservation, budget_reserve, send_estimate
from agents.runtime.plan import SendPlan, model_profile
from agents.runtime.redactions import REDACTION_MEMO, Redactions, redaction_events_record
from agents.runtime.streaming import GovernedStream
from context_assembly.estimator import Estimator
from context_assembly.fitting import FitResult, fit
from governance.errors import ContextRefused
from governance.policy import ContextDecision
from governance.services import EventContext, assert_permitted, governance_event_record
from governance.vocabulary import Decision, EventOutcome


@dataclass(frozen=True)
class SkippedTarget:
    """A target the send was not sent to, and why (figures only, never content)."""

    provider: str
    model: str
    reason: str  # "context_overflow": its window cannot hold the context's floor
    estimated: int  # the floor's tokens, counted for this target
    budget: int  # this target's budget (window - reply limit - safety)
    window: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "reason": self.reason,
            "estimated": self.estimated,
            "budget": self.budget,
            "window": self.window,
        }


@dataclass(frozen=True)
class TargetFit:
    """The fit of one send for one target, by that target's profile and reply limit."""

    model: LlmModel
    estimator: Estimator
    fitted: FitResult
    clamped: bool  # the request's max_tokens was above this model's output limit, and was lowered

    @property
    def max_tokens(self) -> int:
        """The reply limit this target is sent: the fit's output reserve."""
        return self.fitted.breakdown.reserve


@dataclass(frozen=True)
class SendOutcome:
    """Exactly one of: ``refusal`` (nothing fitted or sent), overflow (fitted, not sent), ``failure``
    (sent, the provider failed), or ``reply`` (redacted) with the model that ``served`` it.

    ``fitted`` and ``clamped`` are the serving target's (the serving model's while nothing answered);
    ``skipped`` lists the targets that were not sent the call because it could not fit them."""

    plan: SendPlan
    fitted: FitResult | None = None
    reply: ProviderReply | None = None
    served: LlmModel | None = None
    refusal: ContextRefused | None = None
    failure: ProviderError | None = None
    inactive: ModelInactive | None = None
    clamped: bool = False
    skipped: tuple[SkippedTarget, ...] = ()
    decision: ContextDecision | None = None  # set once the sources were decided and permitted
    reply_redactions: dict[str, int] = field(default_factory=dict)  # by kind, in the reply
    exhausted: BudgetExhausted | None = None  # fitted, not sent: the client's daily budget is spent

    @property
    def overflow(self) -> bool:
        return self.fitted is not None and self.fitted.overflow


def governed_send(
    plan: SendPlan,
    events: EventContext,
    *,
    client_id: int | None,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> SendOutcome:
    """Check every source against the zone (recording events), then fit, reserve the send's estimate
    from the budget of the client ``client_id`` (None: a send no client made), call, and settle the
    reservation with the reported usage. Never raises for a refusal, an overflow, an exhausted budget
    or a provider failure: the outcome says which happened."""
    called = _governed_call(
        SendOutcome, plan, events, client_id, max_tokens, temperature, complete_with_fallbacks
    )
    if isinstance(called, SendOutcome):
        return called
    called.reservation.settle(served=called.served, usage=called.result.reply.usage)
    reply, reply_redactions = _redacted_reply(called.result.reply, plan, events)
    return called.outcome(SendOutcome, reply=reply, reply_redactions=reply_redactions)


@dataclass(frozen=True)
class StreamOutcome:
    """As :class:`SendOutcome`, with an open ``stream`` in place of the reply: exactly one of
    ``refusal``, overflow, ``failure`` (nothing arrived from any target), ``inactive`` or ``stream``
    (its ``served`` model, ``fitted`` and ``clamped`` are the serving target's)."""

    plan: SendPlan
    fitted: FitResult | None = None
    stream: GovernedStream | None = None
    served: LlmModel | None = None
    refusal: ContextRefused | None = None
    failure: ProviderError | None = None
    inactive: ModelInactive | None = None
    clamped: bool = False
    skipped: tuple[SkippedTarget, ...] = ()
    decision: ContextDecision | None = None  # set once the sources were decided and permitted
    exhausted: BudgetExhausted | None = None  # fitted, not sent: the client's daily budget is spent

    @property
    def overflow(self) -> bool:
        return self.fitted is not None and self.fitted.overflow


def governed_stream(
    plan: SendPlan,
    events: EventContext,
    *,
    client_id: int | None,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> StreamOutcome:
    """:func:`governed_send` with the reply as a stream: the same check, events, per-target fits and
    guard pass, then a stream opened on the first target that yields a first delta (retries and
    fallbacks apply up to there: ``agents/providers/dispatch.py``). The stream's deltas are redacted
    as they pass (``agents/runtime/streaming.py``); its finish carries the reply redacted as
    :func:`governed_send` redacts it, and the reply's redaction events are recorded when the finish is
    read. The client's budget reservation is taken as :func:`governed_send` takes it and handed to the
    stream, which settles it at the finish or releases it when closed or broken before. Never raises
    for a refusal, an overflow, an exhausted budget or a provider failure before the first delta."""
    called = _governed_call(
        StreamOutcome, plan, events, client_id, max_tokens, temperature, stream_with_fallbacks
    )
    if isinstance(called, StreamOutcome):
        return called
    finish = partial(_redacted_reply, plan=plan, events=events)
    ended = called.reservation.stream_ended(called.served)
    return called.outcome(StreamOutcome, stream=GovernedStream(called.result, finish=finish, ended=ended))


class _Served(Protocol):
    @property
    def served_index(self) -> int: ...


Outcome = TypeVar("Outcome", SendOutcome, StreamOutcome)
Dispatched = TypeVar("Dispatched", bound=_Served)


@dataclass(frozen=True)
class _Called(Generic[Dispatched]):
    """A governed call that reached a target: its fits, the permitted decision, what the call returned,
    and its budget reservation (to settle with the reply, or hand to the stream)."""

    fits: TargetFits
    decision: ContextDecision
    result: Dispatched
    reservation: Reservation

    @property
    def served(self) -> LlmModel:
        return self.fits.model(self.result.served_index)

    def outcome(self, outcome: type[Outcome], **reply: Any) -> Outcome:
        """The outcome of the target that served the call, with ``reply`` (its reply or stream)."""
        served = self.fits.fit(self.result.served_index)
        return outcome(
            plan=self.fits.plan,
            fitted=served.fitted,
            served=served.model,
            clamped=served.clamped,
            skipped=self.fits.skipped_targets,
            decision=self.decision,
            **reply,
        )


def _governed_call(
    outcome: type[Outcome],
    plan: SendPlan,
    events: EventContext,
    client_id: int | None,
    max_tokens: int | None,
    temperature: float | None,
    dispatch: Callable[..., Dispatched],
) -> Outcome | _Called[Dispatched]:
    """Both sends up to the reply: an active target, the sources checked against the zone, the
    redaction events, the serving model's fit, the reservation of its estimate from the client's
    budget (agents/runtime/budget.py; released here when nothing reached a target), then ``dispatch``
    over the targets (each target it reaches is prepared: fit, skip, guard pass). An ``outcome`` when
    the send ended before a reply, else the call that reached a target."""
    if not plan.targets:
        return outcome(plan=plan, inactive=model_inactive_record(plan=plan, context=events))
    try:
        decision = assert_permitted(sources=plan.sources, zone=plan.zone, context=events)
    except ContextRefused as refusal:
        return outcome(plan=plan, refusal=refusal)
    redaction_events_record(counts=plan.redactions, context=events, zone=plan.zone)
    fits = TargetFits(plan, events, max_tokens, temperature=temperature)
    primary = fits.fit(0)
    if primary.fitted.overflow:
        return outcome(plan=plan, fitted=primary.fitted, clamped=primary.clamped, decision=decision)
    try:
        reservation = fits.reserve(client_id)
    except BudgetExhausted as exhausted:
        fitted, clamped = primary.fitted, primary.clamped
        return outcome(plan=plan, fitted=fitted, clamped=clamped, decision=decision, exhausted=exhausted)
    try:
        result = dispatch(plan.targets, fits.prepare(0).call, prepare=fits.prepare)
    except LateRedactionOverflow as overflow:
        reservation.release()
        late = fits.fit(overflow.late.target_index)
        over = _over_budget(late.fitted, overflow.late.estimated)
        return outcome(
            plan=plan, fitted=over, clamped=late.clamped, skipped=fits.skipped_targets, decision=decision
        )
    except ProviderError as failure:
        reservation.release()
        return outcome(
            plan=plan,
            fitted=primary.fitted,
            failure=failure,
            clamped=primary.clamped,
            skipped=fits.skipped_targets,
            decision=decision,
        )
    except BaseException:
        reservation.release()
        raise
    return _Called(fits, decision, result, reservation)


class TargetFits:
    """The per-target fits of one send, each made once, when first asked for (a fallback's only when
    the walk reaches it, so a step its serving model answers pays for one fit)."""

    def __init__(
        self,
        plan: SendPlan,
        events: EventContext,
        max_tokens: int | None,
        *,
        temperature: float | None = None,
    ) -> None:
        self.plan, self.events, self.max_tokens = plan, events, max_tokens
        self.temperature = temperature
        self._fits: dict[int, TargetFit] = {}
        self._prepared: dict[int, PreparedCall] = {}
        self._skipped: dict[int, SkippedTarget] = {}

    @property
    def skipped_targets(self) -> tuple[SkippedTarget, ...]:
        return tuple(self._skipped[index] for index in sorted(self._skipped))

    def model(self, index: int) -> LlmModel:
        return self.plan.model if index == 0 else self.plan.fallbacks[index - 1]

    def fit(self, index: int) -> TargetFit:
        known = self._fits.get(index)
        if known is None:
            known = self._fits[index] = self._fit(index)
        return known

    def _fit(self, index: int) -> TargetFit:
        model, plan = self.model(index), self.plan
        profile = plan.profile if index == 0 else model_profile(model)
        assembled = plan.assembled
        if assembled.profile != profile:  # only the profile differs: the parts are the target's too
            assembled = replace(assembled, profile=profile)
        estimator = Estimator(profile)
        limit, clamped = reply_limit(self.max_tokens, model)
        return TargetFit(model, estimator, fit(assembled, estimator=estimator, max_tokens=limit), clamped)

    def reserve(self, client_id: int | None) -> Reservation:
        """Reserve this send's estimate from the client's budget (agents/runtime/budget.py): the
        serving model's prompt estimate and reply limit, priced at the dearest target's prices.
        Raises :class:`BudgetExhausted` (its event recorded) when it does not fit."""
        primary = self.fit(0)
        estimate = send_estimate(
            prompt_tokens=primary.fitted.breakdown.estimated,
            max_output_tokens=primary.max_tokens,
            models=[self.model(index) for index in range(len(self.plan.targets))],
        )
        return budget_reserve(client_id=client_id, estimate=estimate, events=self.events, zone=self.plan.zone)

    def prepare(self, index: int) -> PreparedCall:
        """Target ``index``'s own call (its kept messages and reply limit) and guard; raises
        :class:`TargetSkipped` when its window cannot hold the context's floor."""
        known = self._prepared.get(index)
        if known is not None:
            return known
        target = self.fit(index)
        breakdown = target.fitted.breakdown
        if target.fitted.overflow:
            model = target.model
            self._skipped[index] = SkippedTarget(
                provider=model.provider.identifier,
                model=model.model_id,
                reason="context_overflow",
                estimated=breakdown.estimated,
                budget=breakdown.budget,
                window=breakdown.window,
            )
            raise TargetSkipped(
                "context_overflow", {"estimated": breakdown.estimated, "budget": breakdown.budget}
            )
        call = ProviderCall(
            model_id=target.model.model_id,
            messages=target.fitted.messages,
            tool_specs=self.plan.assembled.tool_specs,
            max_tokens=target.max_tokens,
            temperature=self.temperature,
            layout=PromptLayout.of(self.plan.assembled),
            options=self.plan.options,
        )
        prepared = PreparedCall(
            call=call, guard=_guard(self.plan, target.estimator, target.fitted, self.events)
        )
        self._prepared[index] = prepared
        return prepared


def reply_limit(max_tokens: int | None, model: LlmModel) -> tuple[int | None, bool]:
    """The reply limit for ``model`` (None: the fit's default, the model's output limit) and whether
    the requested one was lowered to the model's output limit."""
    if max_tokens is not None and max_tokens > model.max_output_tokens:
        return model.max_output_tokens, True
    return max_tokens, False


def reply_limit_check(models: Sequence[LlmModel], max_tokens: int | None) -> None:
    """Raise :class:`MaxTokensTooLarge` when ``max_tokens`` is above the output limit of every one of
    ``models`` (the targets a send may reach): no target could honour it, so nothing is sent. Above
    some targets' limits only, it is clamped per target at send time."""
    if max_tokens is None or not models:
        return
    largest = max(models, key=lambda model: model.max_output_tokens)
    limit = largest.max_output_tokens
    if max_tokens > limit:
        raise MaxTokensTooLarge(
            f"max_tokens {max_tokens:,} is above what any model of this configuration may write: the "
            f"largest output limit is {limit:,} tokens ({largest.model_id}).",
            extra={"max_tokens": max_tokens, "limit": limit, "model": largest.model_id},
        )


def model_inactive_record(*, plan: SendPlan, context: EventContext) -> ModelInactive:
    """Record that nothing could be sent because every target is switched off; the error to answer."""
    _enforced_event(
        plan, context, Decision.MODEL_INACTIVE, f"no active target among {', '.join(plan.inactive)}"
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
    _enforced_event(
        plan,
        context,
        Decision.LATE_REDACTION,
        f"target {late.target_index} ({late.provider}/{target}): {counts}",
    )


def _enforced_event(plan: SendPlan, context: EventContext, decision: Decision, reason: str) -> None:
    """An enforced governance event of this send, at the plan's zone (raises when it cannot be written)."""
    governance_event_record(
        context=context, decision=decision, outcome=EventOutcome.ENFORCED, zone=plan.zone, reason=reason
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


def _redacted_reply(
    reply: ProviderReply, plan: SendPlan, events: EventContext
) -> tuple[ProviderReply, dict[str, int]]:
    """``reply`` redacted, with what was redacted by kind (its events recorded)."""
    redactions = Redactions()
    text = redactions.text(reply.text)
    calls = redactions.tool_calls(reply.tool_calls)
    redaction_events_record(counts=redactions.counts, context=events, zone=plan.zone)
    redacted = ProviderReply(
        text=text,
        tool_calls=calls,
        finish_reason=reply.finish_reason,
        usage=reply.usage,
        model_id=reply.model_id,
        response_id=reply.response_id,
    )
    return redacted, redactions.counts
