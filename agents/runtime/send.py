"""One governed call: govern → redact → fit → guard → call → redact the reply. Nothing here persists
a run.

A :class:`GovernedCall` ends with one frozen outcome (:mod:`agents.runtime.outcome`), whatever drove
it: :class:`~agents.runtime.outcome.Answered` (the reply, redacted, with what the call settled to get
it) or :class:`~agents.runtime.outcome.Ended` with why, one of :data:`~agents.runtime.outcome.SEND_ERRORS`:
:class:`~agents.errors.ModelInactive` (every target switched off), :class:`ContextRefused` (a source
above the zone's ceiling), :class:`ContextOverflow` (the floor does not fit, or a late redaction
made it not fit), :class:`~agents.errors.BudgetExhausted` (the client's daily budget; nothing sent)
or :class:`ProviderError` (sent, every attempt failed), and what it had settled by then. The step
records a refused or failed step from it as it records an answered one. Nothing is read off the
call afterwards.

The agent loop records a step from it; the completions API answers from it. Both therefore pass the
same check, fit, redaction and guard pass over the serialised body (:mod:`providers.guard`)
before any provider call. The call is made whole (:meth:`GovernedCall.send`) or streamed
(:meth:`GovernedCall.stream`: a :class:`GovernedStream` whose last item is the outcome) by the
blocking driver, or, in an async view, prepared in the request's thread (:meth:`GovernedCall.prepare`)
and made on the event loop (:meth:`GovernedCall.asend`, :meth:`GovernedCall.astream`;
docs/decisions/0011-streaming.md).

Each target's fit, skip and reply limit live in ``agents/runtime/targets.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from asgiref.sync import sync_to_async

from agents.runtime.budget import ClientLimits, Reservation
from agents.runtime.outcome import SEND_ERRORS, Answered, CallOutcome, Ended, SendError, SkippedTarget
from agents.runtime.plan import SendPlan
from agents.runtime.redactions import Redactions, redaction_events_record
from agents.runtime.screening import reply_screened
from agents.runtime.screening_events import reply_screening_record, screening_events_record
from agents.runtime.streaming import GovernedStream
from agents.runtime.targets import TargetFits, enforced_event
from catalog.errors import ModelInactive
from catalog.models import LlmModel
from context_assembly.fitting import FitResult
from governance.errors import ContextRefused
from governance.policy import ContextDecision
from governance.services import EventContext, assert_permitted
from governance.vocabulary import Decision, Provenance
from providers.async_dispatch import LoopAttempts
from providers.dispatch import Dispatched, complete_with_fallbacks, stream_with_fallbacks
from providers.guard import LateRedactionOverflow
from providers.streams import AsyncProviderStream, ProviderStream
from providers.values import ProviderReply, Usage

R = TypeVar("R")
D = TypeVar("D")


class GovernedCall:
    """One governed call of ``plan``, its events recorded with ``events``, charged to the budget of the
    client ``client_id`` (None: a call no client made; ``limits``: its limits as already read), with
    the reply limit ``max_tokens`` and ``temperature`` when given. ``abandoned`` is told the model
    and usage a call was charged when its reader went away before its finish.

    Made once, by one driver; each driver hands back the call's outcome (a stream: as its last
    item). What it settles on the way (the decision, the serving target's fit, the targets skipped,
    the model that served) is kept privately until the outcome is built from it."""

    __slots__ = (
        "_attempts",
        "_clamped",
        "_decision",
        "_fits",
        "_fitted",
        "_reservation",
        "_served",
        "_skipped",
        "abandoned",
        "client_id",
        "events",
        "limits",
        "max_tokens",
        "plan",
        "temperature",
    )

    def __init__(
        self,
        plan: SendPlan,
        events: EventContext,
        *,
        client_id: int | None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        limits: ClientLimits | None = None,
        abandoned: Callable[[LlmModel, Usage], None] | None = None,
    ) -> None:
        self.plan, self.events = plan, events
        self.client_id, self.limits, self.abandoned = client_id, limits, abandoned
        self.max_tokens, self.temperature = max_tokens, temperature
        self._decision: ContextDecision | None = None
        # The serving target's fit: the primary's until a target served, the overflowing one when a
        # late redaction overflowed.
        self._fitted: FitResult | None = None
        self._clamped = False
        self._skipped: tuple[SkippedTarget, ...] = ()
        self._served: LlmModel | None = None
        self._fits: TargetFits | None = None
        self._reservation: Reservation | None = None
        self._attempts: LoopAttempts | None = None

    # --- the blocking driver (the agent loop, WSGI) -----------------------------------------------

    def send(self) -> CallOutcome:
        """The call made whole: the sources checked against the zone (events recorded), the fit, the
        send's estimate reserved from the client's budget, the call with its retries and fallbacks,
        the reservation settled with the reported usage, and the reply redacted, screened and its
        placeholders restored where the send pseudonymized."""
        try:
            fits = self._governed()
            result = self._dispatched(
                lambda: complete_with_fallbacks(self.plan.targets, fits.prepare(0).call, prepare=fits.prepare)
            )
        except SEND_ERRORS as error:
            return self._ended(error)
        return self._answered(result)

    def stream(self) -> GovernedStream | Ended:
        """:meth:`send` with the reply as a stream, opened on the first target that yields a first
        delta (retries and fallbacks apply up to there: ``providers/dispatch.py``), or how the
        call ended before. Its deltas are redacted as they pass (``agents/runtime/streaming.py``); it
        ends with the call's outcome, its reply redacted as :meth:`send` redacts it. The reservation
        is handed to the stream, which settles it at the finish or releases it when closed or broken
        before. Read it to its end or close it."""
        try:
            fits = self._governed()
            dispatch = self._dispatched(
                lambda: stream_with_fallbacks(self.plan.targets, fits.prepare(0).call, prepare=fits.prepare)
            )
        except SEND_ERRORS as error:
            return self._ended(error)
        return self._opened(dispatch)

    # --- on the event loop (an async view) ---------------------------------------------------------

    def prepare(self, *, stream: bool) -> Ended | None:
        """Everything up to the first attempt, in the request's thread (it reads the database): the
        same check, events, fits, reservation and first guard pass as :meth:`send`; how the call
        ended if it ended there. :meth:`asend` or :meth:`astream` then makes the attempts on the
        event loop."""
        try:
            fits = self._governed()
            self._attempts = self._dispatched(
                lambda: LoopAttempts(
                    self.plan.targets, fits.prepare(0).call, prepare=fits.prepare, streaming=stream
                )
            )
        except SEND_ERRORS as error:
            return self._ended(error)
        return None

    async def asend(self, then: Callable[[CallOutcome], R]) -> R:
        """``then`` of :meth:`send`'s outcome, the attempts made on the event loop; the reservation's
        settlement, the reply's redaction (its events recorded) and ``then`` in one call on the
        request's thread."""
        assert self._attempts is not None, "prepare(stream=False) first"
        try:
            result = await self._on_loop(self._attempts.send)
        except SEND_ERRORS as error:
            ended = self._ended(error)
            return await sync_to_async(lambda: then(ended), thread_sensitive=True)()
        return await sync_to_async(lambda: then(self._answered(result)), thread_sensitive=True)()

    async def astream(self) -> GovernedStream | Ended:
        """:meth:`stream`'s stream, opened on the event loop and read there (``async for``)."""
        assert self._attempts is not None, "prepare(stream=True) first"
        try:
            return self._opened(await self._on_loop(self._attempts.open))
        except SEND_ERRORS as error:
            return self._ended(error)

    # --- the steps ---------------------------------------------------------------------------------

    def _governed(self) -> TargetFits:
        """Every call up to its dispatch: an active target, the sources checked against the zone, the
        redaction events, the serving model's fit, the reservation of its estimate from the client's
        budget (agents/runtime/budget.py)."""
        plan, events = self.plan, self.events
        if not plan.targets:
            raise model_inactive_record(plan=plan, context=events)
        try:
            self._decision = assert_permitted(
                sources=plan.sources, zone=plan.zone, context=events, receiver=plan.receiver
            )
        except ContextRefused as refusal:
            refusal.extra = {**refusal.extra, "request_id": events.correlation_id}
            raise
        if plan.routed_from is not None:
            route_event_record(plan=plan, context=events)
        screening_events_record(
            redacted=plan.redactions,
            raised=plan.personal_data,
            pseudonymized=plan.pseudonyms.counts if plan.pseudonyms is not None else {},
            context=events,
            zone=plan.zone,
        )
        fits = self._fits = TargetFits(plan, events, self.max_tokens, temperature=self.temperature)
        primary = fits.fit(0)
        self._fitted, self._clamped = primary.fitted, primary.clamped
        primary.fitted.require_fit()
        self._reservation = fits.reserve(self.client_id, self.limits)
        self._reservation.on_abandoned = self.abandoned
        return fits

    def _dispatched(self, dispatch: Callable[[], D]) -> D:
        """``dispatch()``, or raised what kept it from a target (the reservation released)."""
        try:
            return dispatch()
        except BaseException as error:
            self._failed(error)
            raise

    async def _on_loop(self, attempts: Callable[[], Awaitable[D]]) -> D:
        try:
            return await attempts()
        except BaseException as error:
            await sync_to_async(self._failed, thread_sensitive=True)(error)
            raise

    def _failed(self, error: BaseException) -> None:
        """Release (or, for a reader gone while the call was in flight, charge) the reservation; a late
        redaction's overflow becomes the call's :class:`ContextOverflow`."""
        fits, reservation = self._fits, self._reservation
        assert fits is not None and reservation is not None
        self._skipped = fits.skipped_targets
        if isinstance(error, asyncio.CancelledError):
            self._abandoned_in_flight()
            return
        reservation.release()
        if isinstance(error, LateRedactionOverflow):
            late = fits.fit(error.late.target_index)
            self._fitted, self._clamped = _over_budget(late.fitted, error.late.estimated), late.clamped
            self._fitted.require_fit()

    def _abandoned_in_flight(self) -> None:
        """The reader went away while the call was in flight (before a stream's first delta): the
        provider has the prompt, so the call is charged its prompt estimate for a stream (nothing
        had streamed), and its whole estimate for a whole reply (the provider may finish it)."""
        assert self._fits is not None and self._reservation is not None and self._attempts is not None
        primary = self._fits.fit(0)
        prompt = primary.fitted.breakdown.estimated
        whole = 0 if self._attempts.streaming else self._reservation.estimate.tokens - prompt
        self._reservation.abandon(
            served=primary.model, usage=Usage(prompt, None, whole, Provenance.ESTIMATED)
        )

    def _reached(self, served_index: int) -> LlmModel:
        """The model of target ``served_index``, which serves the call; its fit is the call's."""
        assert self._fits is not None
        served = self._fits.fit(served_index)
        self._fitted, self._clamped, self._served = served.fitted, served.clamped, served.model
        self._skipped = self._fits.skipped_targets
        return served.model

    def _answered(self, result: Dispatched[ProviderReply]) -> Answered:
        """The whole reply of the target that served: the reservation settled, the reply redacted."""
        assert self._reservation is not None
        served = self._reached(result.served_index)
        self._reservation.settle(served=served, usage=result.answer.usage)
        return self._answer(result.answer)

    def _opened(
        self, dispatch: Dispatched[ProviderStream] | Dispatched[AsyncProviderStream]
    ) -> GovernedStream:
        assert self._reservation is not None and self._fits is not None
        served = self._reached(dispatch.served_index)
        fitted = self._fits.fit(dispatch.served_index)
        ended = self._reservation.stream_ended(
            served, prompt_tokens=fitted.fitted.breakdown.estimated, count=fitted.estimator.count_text
        )
        return GovernedStream(
            dispatch.answer,
            finish=self._answer,
            broken=self._ended,
            ended=ended,
            pseudonyms=self.plan.pseudonyms,
        )

    def _answer(self, reply: ProviderReply) -> Answered:
        """The call answered with ``reply``, redacted (its redaction events recorded)."""
        redactions = Redactions()
        text = redactions.text(reply.text)
        calls = redactions.tool_calls(reply.tool_calls)
        thinking = redactions.thinking(reply.thinking)
        redaction_events_record(counts=redactions.counts, context=self.events, zone=self.plan.zone)
        screened = reply_screened(self.plan.pseudonyms, text, calls, thinking)
        reply_screening_record(found=screened.found, context=self.events, zone=self.plan.zone)
        assert self._decision is not None and self._fitted is not None and self._served is not None
        return Answered(
            plan=self.plan,
            reply=replace(reply, text=screened.text, tool_calls=screened.tool_calls, thinking=thinking),
            decision=self._decision,
            fitted=self._fitted,
            served=self._served,
            clamped=self._clamped,
            skipped=self._skipped,
            reply_redactions=redactions.counts,
            reply_personal_data=screened.found,
            restored=screened.restored,
        )

    def _ended(self, error: SendError) -> Ended:
        """The call ended by ``error``, with what it had settled by then."""
        return Ended(
            plan=self.plan,
            error=error,
            decision=self._decision,
            fitted=self._fitted,
            served=self._served,
            clamped=self._clamped,
            skipped=self._skipped,
        )


def route_event_record(*, plan: SendPlan, context: EventContext) -> None:
    """Record that the send's sources exceeded its primary's zone and the trusted model serves it."""
    assert plan.routed_from is not None
    enforced_event(
        plan,
        context,
        Decision.ROUTED,
        f"sources exceed zone {plan.routed_from.value}; served by {plan.model} in zone {plan.zone.value}",
    )


def model_inactive_record(*, plan: SendPlan, context: EventContext) -> ModelInactive:
    """Record that nothing could be sent because every target is switched off; the error to answer."""
    enforced_event(
        plan, context, Decision.MODEL_INACTIVE, f"no active target among {', '.join(plan.inactive)}"
    )
    return ModelInactive(
        f"Configuration '{plan.configuration.identifier}' has no active model: its model, its fallbacks "
        "or their providers are switched off. Nothing was sent.",
        extra={"inactive": list(plan.inactive)},
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
