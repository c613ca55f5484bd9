"""Governed calls outside any run: one completion (whole or streamed) and its record."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from typing import Any

from agents.runtime.budget import client_limits
from agents.runtime.outcome import Answered, Ended
from agents.runtime.plan import receiver_name, send_plan
from agents.runtime.record import served_model_calibrate
from agents.runtime.request import SendRequest
from agents.runtime.send import GovernedCall
from agents.runtime.targets import reply_limit_check
from catalog.errors import ConfigurationInactive, ModalityUnsupported
from catalog.models import ApiClient, Configuration, LlmModel
from catalog.models.sql import row_inserted
from catalog.pricing import reply_cost
from config.logs import log_context_update
from context_assembly.fitting import BudgetBreakdown
from gateway.models import CompletionRecord
from governance.policy import ContextDecision
from governance.services import EventContext
from providers.values import ProviderReply, Usage


@dataclass(frozen=True, slots=True)
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


class CompletionCall:
    """One governed call outside any run, as a client asked for it: built in the request's thread
    (the plan, a new request id that correlates its governance events, the client's budget limits),
    then made through :attr:`call` (:class:`~agents.runtime.send.GovernedCall`: whole or streamed,
    blocking or on the event loop) and finished with its answer (:meth:`finished`); :meth:`create` is
    the whole blocking call.

    Building it raises :class:`ConfigurationInactive` or :class:`MaxTokensTooLarge`; the call ends
    as a governed call ends (:class:`~agents.runtime.outcome.Ended`, one of
    :data:`~agents.runtime.outcome.SEND_ERRORS`; a refusal names the request id). Stores no run; the serving model's calibration takes the provider-reported prompt
    size as a step's does."""

    __slots__ = ("api_client", "call", "request_id")

    def __init__(
        self,
        *,
        configuration: Configuration,
        api_client: ApiClient,
        request: SendRequest,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> None:
        if not configuration.is_active:
            raise ConfigurationInactive(f"Configuration {configuration.identifier!r} is not active.")
        if configuration.model.embeds:
            raise ModalityUnsupported(
                f"Model {configuration.model} of configuration {configuration.identifier!r} is an embedding "
                "model: it answers /embeddings, never a completion. Nothing was sent.",
                extra={"model": str(configuration.model), "modality": "text"},
            )
        self.request_id = request_id = uuid.uuid4().hex
        self.api_client = api_client
        log_context_update(correlation_id=request_id)  # the id of this call's governance events
        # The client is the reply's receiver, whatever the request said (DESIGN §4, "Information flow").
        request = replace(request, receiver_zone=api_client.zone, receiver_name=receiver_name(api_client))
        plan = send_plan(configuration=configuration, request=request)
        if plan.targets:
            reply_limit_check((plan.model, *plan.fallbacks), max_tokens)
        events = EventContext(
            correlation_id=request_id,
            provider=plan.model.provider.identifier,
            model=plan.model.model_id,
            configuration=configuration.identifier,
            api_client=api_client.name,
        )
        self.call = GovernedCall(
            plan,
            events,
            client_id=api_client.pk,
            max_tokens=max_tokens,
            temperature=temperature,
            limits=client_limits(api_client),  # read with the client by this request's authentication
            abandoned=partial(
                abandoned_record, request_id=request_id, api_client=api_client, configuration=configuration
            ),
        )

    def create(self) -> Completion | Ended:
        """The whole call (the blocking driver): answered, or how it ended."""
        outcome = self.call.send()
        return self.finished(outcome) if isinstance(outcome, Answered) else outcome

    def finished(self, answered: Answered) -> Completion:
        """The answered call (its whole reply, or its stream's finish): the serving model's
        calibration takes the reported prompt size and the call's ledger row is written."""
        plan, served, usage = answered.plan, answered.served, answered.usage
        served_model_calibrate(plan=plan, fitted=answered.fitted, served=served, usage=usage)
        record = completion_record(
            request_id=self.request_id,
            api_client=self.api_client,
            configuration=plan.configuration,
            served=served,
            usage=usage,
            label=answered.receiver_label,
        )
        return Completion(
            request_id=self.request_id,
            reply=answered.reply,
            served=served,
            breakdown=answered.fitted.breakdown,
            cost=record.cost,
            decision=answered.decision,
            sent_redactions=dict(plan.redactions),
            reply_redactions=dict(answered.reply_redactions),
            receipt=answered.receipt,
        )


def completion_record(
    *,
    request_id: str,
    api_client: ApiClient,
    configuration: Configuration,
    served: LlmModel,
    usage: Usage,
    label: str = "",
) -> CompletionRecord:
    """The ledger row of a served completion: its usage and its cost (for the reports), and the
    answer's label as delivered (what a score of it is attached to; empty for an abandoned one)."""
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
        label=label,
    )
    # Every completion writes one: one statement (catalog/models/sql.py), not the ORM's save().
    return row_inserted(record)


def abandoned_record(
    served: LlmModel, usage: Usage, *, request_id: str, api_client: ApiClient, configuration: Configuration
) -> None:
    """The ledger row of a completion its client abandoned before the finish (a stream closed or a
    request cancelled): the usage its budget was charged, reported or estimated
    (``agents/runtime/budget.py``, ``Reservation.abandon``), so reports count what was spent."""
    completion_record(
        request_id=request_id, api_client=api_client, configuration=configuration, served=served, usage=usage
    )
