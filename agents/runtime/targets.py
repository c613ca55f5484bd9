"""The targets of one send: each target's own fit, the targets skipped, the reply limit per target,
and the guard pass each prepared call carries (``agents/runtime/send.py`` sends through them).

The fit is made for each target with that target's own profile (window, output limit, tokenizer,
calibration) by the one estimator (docs/decisions/0001-fallbacks-are-models.md): the serving model's
first, which decides whether anything may be sent at all; a fallback's only when the walk reaches it.
A fallback whose window cannot hold the context's floor is skipped, never sent a prompt it cannot
take, and the skip is reported with its figures. The reply limit is the request's ``max_tokens``
clamped to each target's output limit (the clamp is reported); a request asking for more than every
target allows is refused before anything is stored or sent (:func:`reply_limit_check`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agents.errors import MaxTokensTooLarge
from agents.runtime.budget import ClientLimits, Reservation, budget_reserve, send_estimate
from agents.runtime.outcome import SkippedTarget
from agents.runtime.plan import SendPlan, model_profile
from agents.runtime.redactions import REDACTION_MEMO
from catalog.models import LlmModel
from context_assembly.estimator import Estimator
from context_assembly.fitting import FitResult, fit
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import Decision
from providers.dispatch import PreparedCall, TargetSkipped
from providers.guard import LateRedaction, WireGuard
from providers.values import PromptLayout, ProviderCall


@dataclass(frozen=True, slots=True)
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


class TargetFits:
    """The per-target fits of one send, each made once, when first asked for (a fallback's only when
    the walk reaches it, so a step its serving model answers pays for one fit)."""

    __slots__ = ("_fits", "_prepared", "_skipped", "events", "max_tokens", "plan", "temperature")

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

    def reserve(self, client_id: int | None, limits: ClientLimits | None = None) -> Reservation:
        """Reserve this send's estimate from the client's budget (agents/runtime/budget.py): the
        serving model's prompt estimate and reply limit, priced at the dearest target's prices.
        Raises :class:`BudgetExhausted` (its event recorded) when it does not fit."""
        primary = self.fit(0)
        estimate = send_estimate(
            prompt_tokens=primary.fitted.breakdown.estimated,
            max_output_tokens=primary.max_tokens,
            models=[self.model(index) for index in range(len(self.plan.targets))],
        )
        return budget_reserve(
            client_id=client_id, estimate=estimate, events=self.events, zone=self.plan.zone, limits=limits
        )

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
    enforced_event(
        plan,
        context,
        Decision.LATE_REDACTION,
        f"target {late.target_index} ({late.provider}/{target}): {counts}",
    )


def enforced_event(plan: SendPlan, context: EventContext, decision: Decision, reason: str) -> None:
    """An enforced governance event of this send, at the plan's zone (raises when it cannot be written)."""
    enforced_event_record(context=context, decision=decision, zone=plan.zone, reason=reason)
