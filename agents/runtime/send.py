"""One governed send: govern → redact → fit → guard → call → redact the reply. Nothing here persists
a run.

The agent loop records what this returns as a step; the completions API returns it to the caller.
Both therefore pass the same check, the same fit, the same redaction and the same guard pass over the
serialised body (:mod:`agents.providers.guard`) before any provider call.

Each target's fit, skip and reply limit live in ``agents/runtime/targets.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import partial
from typing import Any, ClassVar, Generic, NoReturn, Protocol, Self, TypeVar, cast

from asgiref.sync import sync_to_async

from agents.errors import BudgetExhausted, ModelInactive
from agents.models import LlmModel
from agents.providers.async_dispatch import AsyncStreamDispatch, SendStart, StreamStart
from agents.providers.dispatch import (
    DispatchResult,
    StreamDispatch,
    complete_with_fallbacks,
    stream_with_fallbacks,
)
from agents.providers.failures import ProviderError
from agents.providers.guard import LateRedactionOverflow
from agents.providers.values import ProviderReply, Usage
from agents.runtime.budget import ClientLimits, Reservation
from agents.runtime.plan import SendPlan
from agents.runtime.redactions import Redactions, redaction_events_record
from agents.runtime.streaming import GovernedStream
from agents.runtime.targets import SkippedTarget, TargetFits, enforced_event
from context_assembly.fitting import FitResult
from governance.errors import ContextRefused
from governance.policy import ContextDecision
from governance.services import EventContext, assert_permitted
from governance.vocabulary import Decision, Provenance


@dataclass(frozen=True)
class _OutcomeFields:
    """What both sends report before their reply: the serving target's ``fitted`` and ``clamped`` (the
    serving model's while nothing answered), the model that ``served`` the call, the targets
    ``skipped`` because the call could not fit them, and what ended the send early, if anything."""

    plan: SendPlan
    fitted: FitResult | None = None
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


@dataclass(frozen=True)
class SendOutcome(_OutcomeFields):
    """Exactly one of: ``refusal`` (nothing fitted or sent), overflow (fitted, not sent), ``failure``
    (sent, the provider failed), ``inactive``, ``exhausted``, or ``reply`` (redacted) with the model
    that ``served`` it."""

    reply: ProviderReply | None = None
    reply_redactions: dict[str, int] = field(default_factory=dict)  # by kind, in the reply


def _send_outcome(called: _Called[DispatchResult], events: EventContext) -> SendOutcome:
    """The outcome of a whole call that was answered: the reservation settled with the reported usage,
    the reply redacted (its redaction events recorded)."""
    called.reservation.settle(served=called.served, usage=called.result.reply.usage)
    reply, reply_redactions = _redacted_reply(called.result.reply, called.fits.plan, events)
    return called.outcome(SendOutcome, reply=reply, reply_redactions=reply_redactions)


@dataclass(frozen=True)
class StreamOutcome(_OutcomeFields):
    """As :class:`SendOutcome`, with an open ``stream`` in place of the reply (``failure``: nothing
    arrived from any target)."""

    stream: GovernedStream | None = None


@dataclass(frozen=True)
class GovernedSend:
    """One governed send of ``plan``, its events recorded with ``events``, charged to the budget of the
    client ``client_id`` (None: a send no client made; ``limits``: its limits as already read), with
    the reply limit ``max_tokens`` and ``temperature`` when given: made whole (:meth:`send`), streamed
    (:meth:`stream`), or prepared up to its first attempt to be made on the event loop
    (:meth:`GovernedStreamStart.prepared`, :meth:`GovernedSendStart.prepared`)."""

    plan: SendPlan
    events: EventContext
    _: KW_ONLY
    client_id: int | None
    max_tokens: int | None = None
    temperature: float | None = None
    limits: ClientLimits | None = None
    # Told the model and usage a send was charged when its reader went away before its finish.
    abandoned: Callable[[LlmModel, Usage], None] | None = None

    def send(self) -> SendOutcome:
        """Check every source against the zone (recording events), then fit, reserve the send's
        estimate from the client's budget, call, and settle the reservation with the reported usage.
        Never raises for a refusal, an overflow, an exhausted budget or a provider failure: the
        outcome says which happened."""
        called = _governed_call(SendOutcome, self, complete_with_fallbacks)
        if isinstance(called, SendOutcome):
            return called
        return _send_outcome(called, self.events)

    def stream(self) -> StreamOutcome:
        """:meth:`send` with the reply as a stream: the same check, events, per-target fits and guard
        pass, then a stream opened on the first target that yields a first delta (retries and
        fallbacks apply up to there: ``agents/providers/dispatch.py``). The stream's deltas are
        redacted as they pass (``agents/runtime/streaming.py``); its finish carries the reply redacted
        as :meth:`send` redacts it, and the reply's redaction events are recorded when the finish is
        read. The client's budget reservation is taken as :meth:`send` takes it and handed to the
        stream, which settles it at the finish or releases it when closed or broken before. Never
        raises for a refusal, an overflow, an exhausted budget or a provider failure before the first
        delta."""
        called = _governed_call(StreamOutcome, self, stream_with_fallbacks)
        if isinstance(called, StreamOutcome):
            return called
        return _stream_outcome(called, self.events)


Started = TypeVar("Started", StreamStart, SendStart)
R = TypeVar("R")


class _GovernedStart(Generic[Started]):
    """A governed call prepared up to its first attempt, to be made on the event loop."""

    outcome: ClassVar[type[SendOutcome | StreamOutcome]]
    attempts: ClassVar[type[SendStart | StreamStart]]

    @classmethod
    def prepared(cls, send: GovernedSend) -> SendOutcome | StreamOutcome | Self:
        """``send`` up to its first attempt, in this thread: the same check, events, fits,
        reservation and the first target's guard pass as :meth:`GovernedSend.send`. What ends the call
        before an attempt is its outcome; otherwise the start, whose attempts are made on the event
        loop (``agents/providers/async_dispatch.py``) and answer as the blocking send does."""
        # The subclass's own outcome and attempts (mypy cannot tie class variables to ``Started``).
        outcome: Any = cls.outcome
        called = _governed_call(outcome, send, cls.attempts)
        if isinstance(called, SendOutcome | StreamOutcome):
            return called
        return cls(cast(_Called[Started], called), send.events)

    def __init__(self, called: _Called[Started], events: EventContext) -> None:
        self._called: _Called[Started] = called
        self._events = events

    async def _attempted(
        self, outcome: type[Outcome], attempts: Callable[[], Awaitable[Dispatched]]
    ) -> Outcome | _Called[Dispatched]:
        """The call that reached a target through ``attempts()``, or the outcome of the failure that
        ended the send (the reservation released, in the request's thread); re-raises anything else
        (a cancellation: the client went away) once the reservation is released."""
        called = self._called
        try:
            result = await attempts()
        except BaseException as error:
            ended = await sync_to_async(_dispatched, thread_sensitive=True)(
                outcome, called.fits, called.decision, called.reservation, partial(_raise, error)
            )
            assert isinstance(ended, outcome)  # _raise never returns
            return ended
        return _Called(called.fits, called.decision, result, called.reservation)


class GovernedStreamStart(_GovernedStart[StreamStart]):
    """:meth:`GovernedSend.stream` prepared up to its first attempt (:meth:`prepared`)."""

    outcome = StreamOutcome
    attempts = StreamStart

    async def open(self) -> StreamOutcome:
        """:meth:`GovernedSend.stream`'s outcome, its attempts made on the event loop and its stream read
        there (``async for``). A failure before the first delta ends the send as there."""
        opened = await self._attempted(StreamOutcome, self._called.result.open)
        if isinstance(opened, StreamOutcome):
            return opened
        return _stream_outcome(opened, self._events)


class GovernedSendStart(_GovernedStart[SendStart]):
    """:meth:`GovernedSend.send` prepared up to its first attempt (:meth:`prepared`)."""

    outcome = SendOutcome
    attempts = SendStart

    async def send(self, then: Callable[[SendOutcome], R]) -> R:
        """``then`` of :meth:`GovernedSend.send`'s outcome, its attempts made on the event loop; the
        reservation's settlement, the reply's redaction (its events recorded) and ``then`` in one call
        on the request's thread."""
        sent = await self._attempted(SendOutcome, self._called.result.send)
        if isinstance(sent, SendOutcome):
            return await sync_to_async(then, thread_sensitive=True)(sent)
        return await sync_to_async(lambda: then(_send_outcome(sent, self._events)), thread_sensitive=True)()


def _raise(error: BaseException) -> NoReturn:
    raise error


def _stream_outcome(
    called: _Called[StreamDispatch] | _Called[AsyncStreamDispatch], events: EventContext
) -> StreamOutcome:
    finish = partial(_redacted_reply, plan=called.fits.plan, events=events)
    served = called.fits.fit(called.result.served_index)
    ended = called.reservation.stream_ended(
        called.served, prompt_tokens=served.fitted.breakdown.estimated, count=served.estimator.count_text
    )
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
    outcome: type[Outcome], send: GovernedSend, dispatch: Callable[..., Dispatched]
) -> Outcome | _Called[Dispatched]:
    """Every send up to the reply: an active target, the sources checked against the zone, the
    redaction events, the serving model's fit, the reservation of its estimate from the client's
    budget (agents/runtime/budget.py; released here when nothing reached a target), then ``dispatch``
    over the targets (each target it reaches is prepared: fit, skip, guard pass). An ``outcome`` when
    the send ended before a reply, else the call that reached a target."""
    plan, events = send.plan, send.events
    if not plan.targets:
        return outcome(plan=plan, inactive=model_inactive_record(plan=plan, context=events))
    try:
        decision = assert_permitted(
            sources=plan.sources, zone=plan.zone, context=events, receiver=plan.receiver
        )
    except ContextRefused as refusal:
        return outcome(plan=plan, refusal=refusal)
    if plan.routed_from is not None:
        route_event_record(plan=plan, context=events)
    redaction_events_record(counts=plan.redactions, context=events, zone=plan.zone)
    fits = TargetFits(plan, events, send.max_tokens, temperature=send.temperature)
    primary = fits.fit(0)
    if primary.fitted.overflow:
        return outcome(plan=plan, fitted=primary.fitted, clamped=primary.clamped, decision=decision)
    try:
        reservation = fits.reserve(send.client_id, send.limits)
    except BudgetExhausted as exhausted:
        fitted, clamped = primary.fitted, primary.clamped
        return outcome(plan=plan, fitted=fitted, clamped=clamped, decision=decision, exhausted=exhausted)
    reservation.on_abandoned = send.abandoned
    return _dispatched(
        outcome,
        fits,
        decision,
        reservation,
        lambda: dispatch(plan.targets, fits.prepare(0).call, prepare=fits.prepare),
    )


def _dispatched(
    outcome: type[Outcome],
    fits: TargetFits,
    decision: ContextDecision,
    reservation: Reservation,
    dispatch: Callable[[], Dispatched],
) -> Outcome | _Called[Dispatched]:
    """``dispatch()`` as the call that reached a target, or the outcome of what kept it from one (the
    reservation released): a late redaction's overflow, or the provider's failure."""
    plan = fits.plan
    try:
        result = dispatch()
    except LateRedactionOverflow as overflow:
        reservation.release()
        late = fits.fit(overflow.late.target_index)
        over = _over_budget(late.fitted, overflow.late.estimated)
        return outcome(
            plan=plan, fitted=over, clamped=late.clamped, skipped=fits.skipped_targets, decision=decision
        )
    except ProviderError as failure:
        reservation.release()
        primary = fits.fit(0)
        return outcome(
            plan=plan,
            fitted=primary.fitted,
            failure=failure,
            clamped=primary.clamped,
            skipped=fits.skipped_targets,
            decision=decision,
        )
    except asyncio.CancelledError:
        _abandoned_in_flight(outcome, fits, reservation)
        raise
    except BaseException:
        reservation.release()
        raise
    return _Called(fits, decision, result, reservation)


def _abandoned_in_flight(outcome: type[Outcome], fits: TargetFits, reservation: Reservation) -> None:
    """The reader went away while the call was in flight (before a stream's first delta): the
    provider has the prompt, so the send is charged its prompt estimate for a stream (nothing had
    streamed), and its whole estimate for a whole reply (the provider may finish it)."""
    primary = fits.fit(0)
    prompt = primary.fitted.breakdown.estimated
    whole = reservation.estimate.tokens - prompt if outcome is SendOutcome else 0
    reservation.abandon(served=primary.model, usage=Usage(prompt, None, whole, Provenance.ESTIMATED))


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


def _redacted_reply(
    reply: ProviderReply, plan: SendPlan, events: EventContext
) -> tuple[ProviderReply, dict[str, int]]:
    """``reply`` redacted, with what was redacted by kind (its events recorded)."""
    redactions = Redactions()
    text = redactions.text(reply.text)
    calls = redactions.tool_calls(reply.tool_calls)
    redaction_events_record(counts=redactions.counts, context=events, zone=plan.zone)
    return replace(reply, text=text, tool_calls=calls), redactions.counts
