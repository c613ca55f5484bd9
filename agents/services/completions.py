"""Governed calls outside any run: one whole completion, or a stream of one, and its record."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from typing import Any, TypeVar

from agents.errors import ConfigurationInactive
from agents.models import ApiClient, CompletionRecord, Configuration, LlmModel
from agents.providers.values import ProviderReply, Usage
from agents.runtime.budget import client_limits
from agents.runtime.plan import SendPlan, SendRequest, receiver_name, send_plan
from agents.runtime.receipts import answer_receipt
from agents.runtime.record import reply_cost, served_model_calibrate
from agents.runtime.send import (
    GovernedSend,
    GovernedSendStart,
    GovernedStreamStart,
    SendOutcome,
    StreamOutcome,
)
from agents.runtime.streaming import GovernedStream
from agents.runtime.targets import reply_limit_check
from config.logs import log_context_update
from context_assembly.fitting import BudgetBreakdown, FitResult
from governance.errors import ContextRefused
from governance.policy import ContextDecision
from governance.services import EventContext


@dataclass(frozen=True)
class Completion:
    """One governed call's answer (redacted), the model that served it, and the fit's breakdown."""

    request_id: str
    reply: ProviderReply
    served: LlmModel
    breakdown: BudgetBreakdown
    # At the serving model's prices; None when the provider reported no usage.
    cost: Decimal | None = None
    decision: ContextDecision | None = None
    # Secrets redacted by kind: in what was sent, and in the reply.
    sent_redactions: dict[str, int] = field(default_factory=dict)
    reply_redactions: dict[str, int] = field(default_factory=dict)
    receipt: dict[str, Any] = field(default_factory=dict)  # content-free (agents/runtime/receipts.py)


@dataclass(frozen=True)
class CompletionAsk:
    """One governed call outside any run, as a client asked for it: made whole (:meth:`create`),
    streamed (:meth:`stream_open`), or prepared up to its provider call in this thread, for the event
    loop to make (:meth:`start`, :meth:`stream_start`). Each builds its send once; a new request id
    correlates its governance events.

    Raises :class:`ContextRefused` (events recorded, nothing sent), ``ContextOverflow`` (nothing sent),
    ``ProviderError`` (sent, the provider failed), :class:`MaxTokensTooLarge` or :class:`BudgetExhausted`
    (the client's daily budget; nothing sent), or :class:`ConfigurationInactive`. Stores no run; the
    serving model's calibration takes the provider-reported prompt size as a step's does."""

    configuration: Configuration
    api_client: ApiClient
    request: SendRequest
    max_tokens: int | None = None
    temperature: float | None = None

    def create(self) -> Completion:
        """The whole call, answered."""
        outcome, sent = self._sent(GovernedSend.send)
        assert outcome.reply is not None
        return sent.finished(outcome.reply, outcome.reply_redactions)

    def stream_open(self) -> CompletionStream:
        """The call with its reply streamed: raises the same errors up to the provider's first delta (a
        target that fails before it is retried or falls back); after that a broken stream raises
        ``ProviderError`` from the stream. The caller must read the stream to its end or close it."""
        outcome, sent = self._sent(GovernedSend.stream)
        assert outcome.stream is not None
        return CompletionStream(stream=outcome.stream, sent=sent)

    def start(self) -> CompletionStart:
        """:meth:`create` up to the provider call, in this thread (everything that reads the database:
        the plan, the decision and its events, the fits, the budget reservation, the first target's
        guard pass), raising the same errors up to there; :meth:`CompletionStart.complete` makes the
        call on the event loop."""
        started, request_id, plan = self._started(GovernedSendStart.prepared)
        assert isinstance(started, GovernedSendStart)
        return CompletionStart(started, request_id, self.api_client, plan)

    def stream_start(self) -> CompletionStreamStart:
        """:meth:`stream_open` up to the provider call, as :meth:`start` is for a whole reply;
        :meth:`CompletionStreamStart.open` makes the call on the event loop."""
        started, request_id, plan = self._started(GovernedStreamStart.prepared)
        assert isinstance(started, GovernedStreamStart)
        return CompletionStreamStart(started, request_id, self.api_client, plan)

    def _sent(self, send: Callable[[GovernedSend], Outcome]) -> tuple[Outcome, SentCompletion]:
        """The call governed and sent by ``send`` (the whole or the streamed send), or raised for what
        kept it from being sent; its outcome and what its finish needs."""
        request_id, governed = self._governed()
        outcome = send(governed)
        return outcome, _sent_of(outcome, request_id, self.api_client, governed.plan)

    def _started(
        self,
        start: Callable[
            [GovernedSend], SendOutcome | StreamOutcome | GovernedSendStart | GovernedStreamStart
        ],
    ) -> tuple[GovernedSendStart | GovernedStreamStart, str, SendPlan]:
        """The call prepared by ``start`` up to its first attempt, its request id and plan; raises what
        kept it from being sent."""
        request_id, governed = self._governed()
        started = start(governed)
        if isinstance(started, SendOutcome | StreamOutcome):
            _sent_of(started, request_id, self.api_client, governed.plan)  # raises: nothing was sent
            raise AssertionError("a call that ended before it was sent has its reason")
        return started, request_id, governed.plan

    def _governed(self) -> tuple[str, GovernedSend]:
        """The call's request id and its send for the client: the plan, its events' context and the
        client's budget limits."""
        configuration = self.configuration
        if not configuration.is_active:
            raise ConfigurationInactive(f"Configuration {configuration.identifier!r} is not active.")
        request_id = uuid.uuid4().hex
        log_context_update(correlation_id=request_id)  # the id of this call's governance events
        # The client is the reply's receiver, whatever the request said (DESIGN §4, "Information flow").
        client = self.api_client
        request = replace(self.request, receiver_zone=client.zone, receiver_name=receiver_name(client))
        plan = send_plan(configuration=configuration, request=request)
        if plan.targets:
            reply_limit_check((plan.model, *plan.fallbacks), self.max_tokens)
        events = EventContext(
            correlation_id=request_id,
            provider=plan.model.provider.identifier,
            model=plan.model.model_id,
            configuration=configuration.identifier,
            api_client=self.api_client.name,
        )
        limits = client_limits(self.api_client)  # read with the client by this request's authentication
        send = GovernedSend(
            plan,
            events,
            client_id=self.api_client.pk,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            limits=limits,
            abandoned=partial(
                abandoned_record,
                request_id=request_id,
                api_client=self.api_client,
                configuration=configuration,
            ),
        )
        return request_id, send


@dataclass(frozen=True)
class SentCompletion:
    """A call the provider is answering: what its finish needs."""

    request_id: str
    api_client: ApiClient
    plan: SendPlan
    served: LlmModel
    fitted: FitResult
    decision: ContextDecision

    def finished(self, reply: ProviderReply, reply_redactions: dict[str, int]) -> Completion:
        """The finished call: the serving model's calibration takes the reported prompt size and the
        call's ledger row is written."""
        served_model_calibrate(plan=self.plan, fitted=self.fitted, served=self.served, usage=reply.usage)
        record = completion_record(
            request_id=self.request_id,
            api_client=self.api_client,
            configuration=self.plan.configuration,
            served=self.served,
            usage=reply.usage,
        )
        return Completion(
            request_id=self.request_id,
            reply=reply,
            served=self.served,
            breakdown=self.fitted.breakdown,
            cost=record.cost,
            decision=self.decision,
            sent_redactions=dict(self.plan.redactions),
            reply_redactions=dict(reply_redactions),
            receipt=answer_receipt(
                plan=self.plan, decision=self.decision, served=self.served, reply_redactions=reply_redactions
            ),
        )


@dataclass(frozen=True)
class CompletionStream:
    """One governed call whose reply streams: its redacted deltas (``stream``, ending with the whole
    redacted reply), the model that serves it, its fit and the decision."""

    stream: GovernedStream
    sent: SentCompletion

    @property
    def request_id(self) -> str:
        return self.sent.request_id

    @property
    def served(self) -> LlmModel:
        return self.sent.served

    def finished(self, reply: ProviderReply) -> Completion:
        """The finished call as :meth:`CompletionAsk.create` answers it (``reply`` is the stream's finish);
        the serving model's calibration takes the reported prompt size and its ledger row is written, as there."""
        return self.sent.finished(reply, self.stream.reply_redactions)


Outcome = TypeVar("Outcome", SendOutcome, StreamOutcome)
R = TypeVar("R")


def _sent_of(
    outcome: SendOutcome | StreamOutcome, request_id: str, api_client: ApiClient, plan: SendPlan
) -> SentCompletion:
    """What the finish of a sent ``outcome`` needs; raises what kept it from being sent."""
    _raise_unless_sent(outcome, request_id)
    assert outcome.fitted is not None and outcome.served is not None and outcome.decision is not None
    return SentCompletion(request_id, api_client, plan, outcome.served, outcome.fitted, outcome.decision)


@dataclass(frozen=True)
class CompletionStart:
    """A whole completion prepared up to its provider call (:meth:`CompletionAsk.start`)."""

    start: GovernedSendStart
    request_id: str
    api_client: ApiClient
    plan: SendPlan

    async def complete(self, then: Callable[[Completion], R]) -> R:
        """``then`` of the completion, its provider call made on the event loop; its finish
        (calibration, ledger row) and ``then`` in the request's thread, in the call that settles it.
        Raises what :meth:`CompletionAsk.create` raises for a failed call."""
        return await self.start.send(lambda outcome: then(self._finished(outcome)))

    def _finished(self, outcome: SendOutcome) -> Completion:
        sent = _sent_of(outcome, self.request_id, self.api_client, self.plan)
        assert outcome.reply is not None
        return sent.finished(outcome.reply, outcome.reply_redactions)


@dataclass(frozen=True)
class CompletionStreamStart:
    """A streamed completion prepared up to its provider call (:meth:`CompletionAsk.stream_start`)."""

    start: GovernedStreamStart
    request_id: str
    api_client: ApiClient
    plan: SendPlan

    async def open(self) -> CompletionStream:
        """The open stream, its reply read on the event loop (``async for``); raises what
        :meth:`CompletionAsk.stream_open` raises for a failure before the first delta."""
        outcome = await self.start.open()
        sent = _sent_of(outcome, self.request_id, self.api_client, self.plan)
        assert outcome.stream is not None
        return CompletionStream(stream=outcome.stream, sent=sent)


def _raise_unless_sent(outcome: SendOutcome | StreamOutcome, request_id: str) -> None:
    """Raise what kept ``outcome`` from being sent (or its provider failure); return when it was sent."""
    if outcome.inactive is not None:
        raise outcome.inactive
    if outcome.refusal is not None:
        refusal = outcome.refusal
        raise ContextRefused(refusal.message, extra={**refusal.extra, "request_id": request_id})
    if outcome.exhausted is not None:
        raise outcome.exhausted
    if outcome.failure is not None:
        raise outcome.failure
    assert outcome.fitted is not None  # set on every outcome past the refusal
    outcome.fitted.require_fit()


def completion_record(
    *,
    request_id: str,
    api_client: ApiClient,
    configuration: Configuration,
    served: LlmModel,
    usage: Usage,
) -> CompletionRecord:
    """The ledger row of a served completion: its usage and its cost (for the reports)."""
    record = CompletionRecord(
        request_id=request_id,
        api_client=api_client,
        configuration=configuration,
        model=served,
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        completion_tokens=usage.completion_tokens,
        cost=reply_cost(served, usage),
    )
    record.save()
    return record


def abandoned_record(
    served: LlmModel, usage: Usage, *, request_id: str, api_client: ApiClient, configuration: Configuration
) -> None:
    """The ledger row of a completion its client abandoned before the finish (a stream closed or a
    request cancelled): the usage its budget was charged, reported or estimated
    (``agents/runtime/budget.py``, ``Reservation.abandon``), so reports count what was spent."""
    completion_record(
        request_id=request_id, api_client=api_client, configuration=configuration, served=served, usage=usage
    )
