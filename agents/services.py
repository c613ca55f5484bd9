"""Writes for the agents app."""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from agents.errors import ConfigurationInactive, InvalidScope, UnknownSkills
from agents.models import (
    AgentRun,
    ApiClient,
    CompletionRecord,
    Configuration,
    LlmModel,
    RunStatus,
    TerminationReason,
)
from agents.models.runs import TERMINAL_STATUSES
from agents.providers.base import ProviderReply
from agents.runtime.conversation import Conversation, conversation_request
from agents.runtime.parts import snippet_selection
from agents.runtime.pins import configuration_pins_take
from agents.runtime.plan import (
    Redactions,
    SendPlan,
    SendRequest,
    active_targets,
    redaction_events_record,
    send_plan,
)
from agents.runtime.queue import step_enqueue
from agents.runtime.record import reply_cost, served_model_calibrate
from agents.runtime.send import (
    SendOutcome,
    StreamOutcome,
    governed_send,
    governed_stream,
    reply_limit_check,
)
from agents.runtime.streaming import GovernedStream
from agents.scopes import SCOPES
from agents.selectors import catalog_token_of, configuration_fallbacks, skills_usable_by
from agents.telemetry import run_span_attributes
from agents.tokens import token_digest
from config.logs import log_context_update
from config.tracing import traced
from context_assembly.assembly import ContextItem
from context_assembly.fitting import BudgetBreakdown, FitResult
from governance.actors import Actor
from governance.errors import ContextRefused
from governance.policy import ContextDecision
from governance.services import EventContext, reclassification_guard
from governance.vocabulary import DataClass, TrustZone
from skills.models import Skill

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "gca_"


@dataclass(frozen=True)
class IssuedClient:
    client: ApiClient
    token: str  # shown once; only its digest is stored


@transaction.atomic
def api_client_create(
    *,
    name: str,
    scopes: list[str],
    configurations: list[Configuration] | None = None,
    default_input_data_class: DataClass = DataClass.EDITOR_CONTENT,
    trust_zone: TrustZone = TrustZone.EXTERNAL_GLOBAL,
) -> IssuedClient:
    """A new client and its token (shown once). ``trust_zone`` is where the client runs, so what
    the API shows it; the default is the strictest."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise InvalidScope(f"Unknown scopes: {', '.join(unknown)}.", extra={"known": list(SCOPES)})
    token, prefix, digest = _token_issue()
    client = ApiClient(
        name=name,
        token_prefix=prefix,
        token_digest=digest,
        scopes=sorted(set(scopes)),
        default_input_data_class=default_input_data_class,
        trust_zone=trust_zone,
    )
    client.full_clean()
    client.save()
    if configurations:
        client.configurations.set(configurations)
    return IssuedClient(client=client, token=token)


def _token_issue() -> tuple[str, str, str]:
    """A new token, its shown prefix and its stored digest."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token[:10], token_digest(token)


@transaction.atomic
def api_client_rotate_token(*, client: ApiClient) -> IssuedClient:
    """Replace the client's token: the old one stops authenticating at once, the client row (and the
    runs and events that point to it) stays. The new token is returned once; only its digest is kept."""
    token, client.token_prefix, client.token_digest = _token_issue()
    client.save(update_fields=["token_prefix", "token_digest"])
    return IssuedClient(client=client, token=token)


def configuration_save(*, configuration: Configuration, actor: Actor) -> Configuration:
    """Validate and save ``configuration`` (new or changed). Raises ``ValidationError``, or
    ``ReclassifyForbidden`` when ``actor`` may not loosen its system prompt's classification, before
    anything is stored; a changed classification is a ``reclassified`` event."""
    with reclassification_guard(row=configuration, actor=actor):
        configuration.full_clean()
        configuration.save()
    return configuration


@dataclass(frozen=True)
class CallerContextItem:
    name: str
    text: str
    data_class: str


@traced("invoke_agent", result_attributes=run_span_attributes)
def run_create(
    *,
    configuration: Configuration,
    input_text: str,
    input_data_class: str | None = None,
    api_client: ApiClient | None = None,
    caller_context: Sequence[CallerContextItem] = (),
    request_skills: Sequence[int] = (),
    max_tokens: int | None = None,
    messages: Sequence[Any] | None = None,
) -> AgentRun:
    """Create a run and enqueue its first step when the transaction commits.

    The task is ``input_text``, or ``messages``: a conversation in OpenAI's shape whose first user
    message is the task (:mod:`agents.runtime.conversation`; ``input_text`` is then ignored and
    ``input_data_class`` is the class of every message without its own). The task input's class
    defaults to the client's default class (docs/governance.md, "Sources"). The input, the caller
    context (names and texts) and the conversation are stored redacted, with one ``secret_redacted``
    event per kind found. The run pins the versions of its configuration, snippets and skills
    (``agents/runtime/pins.py``). Nothing is stored or enqueued when validation fails, including a
    ``max_tokens`` above every active target's output limit (:class:`MaxTokensTooLarge`).
    """
    if not configuration.is_active:
        raise ConfigurationInactive(f"Configuration {configuration.identifier!r} is not active.")
    active, _ = active_targets((configuration.model, *configuration_fallbacks(configuration)))
    reply_limit_check(active, max_tokens)
    skills = _request_skills(api_client=api_client, skill_ids=request_skills)
    data_class = input_data_class or (
        api_client.default_input_data_class if api_client else DataClass.SECRET_ADJACENT
    )
    items = tuple(ContextItem(i.name, i.text, i.data_class) for i in caller_context)
    conversation = None
    if messages is not None:
        conversation = conversation_request(
            messages,
            Conversation(
                default_class=data_class,
                allow_system_override=configuration.allow_system_override,
                caller_context=items,
            ),
        )
        input_text, data_class, items = (
            conversation.task_input,
            conversation.input_data_class,
            conversation.caller_context,
        )
    # Stored as it may leave: redacted (names included), as every send would redact it anyway.
    redactions = Redactions()
    with transaction.atomic():
        run = AgentRun(
            configuration=configuration,
            api_client=api_client,
            input_text=redactions.text(input_text),
            input_data_class=data_class,
            caller_context=[_stored_item(item, redactions) for item in items],
            conversation=stored_conversation(conversation, redactions) if conversation else {},
            request_skills=list(request_skills),
            max_tokens=max_tokens,
            pins=configuration_pins_take(
                configuration=configuration,
                snippets=snippet_selection(
                    configuration.snippet_tags, catalog_token_of(configuration)
                ).snippets,
                request_skills=skills,
            ),
        )
        run.full_clean()
        run.save()
        events = EventContext(
            correlation_id=str(run.id),
            configuration=configuration.identifier,
            api_client=api_client.name if api_client else "",
            run=str(run.id),
        )
        redaction_events_record(counts=redactions.counts, context=events, zone=None)
        step_enqueue(run_id=str(run.id), step_index=0)
    return run


def _stored_item(item: ContextItem, redactions: Redactions) -> dict[str, str]:
    stored = {
        "name": redactions.text(item.name),
        "text": redactions.text(item.text),
        "data_class": item.data_class,
    }
    if item.identifier is not None:
        stored["identifier"] = item.identifier
    return stored


def stored_conversation(request: SendRequest, redactions: Redactions) -> dict[str, Any]:
    """The parts of a conversation's request a run keeps besides its input and caller context
    (the shape ``AgentRun.conversation`` documents), redacted."""
    sources = request.transcript_sources or ()
    return {
        "task_input": request.task_input_identifier,
        "system_override": [_stored_item(item, redactions) for item in request.system_override],
        "transcript": [
            {
                **redactions.message(message).to_openai(),
                "data_class": source.data_class,
                "identifier": source.identifier,
            }
            for message, source in zip(request.transcript, sources, strict=True)
        ],
    }


def run_cancel(*, run: AgentRun) -> AgentRun:
    """Ask a run to stop. Honoured at the next step boundary; a run no worker holds stops now."""
    AgentRun.objects.filter(id=run.id).exclude(status__in=TERMINAL_STATUSES).update(cancel_requested=True)
    AgentRun.objects.filter(id=run.id, status=RunStatus.QUEUED, lease_owner="").update(
        status=RunStatus.CANCELLED, termination_reason=TerminationReason.CANCELLED, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


def send_request_build(
    *,
    input_text: str,
    input_data_class: str | None,
    api_client: ApiClient,
    caller_context: Sequence[CallerContextItem] = (),
    request_skills: Sequence[int] = (),
) -> SendRequest:
    """The per-request part of a preview or completion. The input's class defaults to the client's
    default; caller context keeps its declared classes (both always enforce). Raises
    :class:`UnknownSkills` for skills the request may not name (see :func:`_request_skills`)."""
    skills = _request_skills(api_client=api_client, skill_ids=request_skills)
    return SendRequest(
        task_input=input_text,
        input_data_class=input_data_class or api_client.default_input_data_class,
        caller_context=tuple(ContextItem(i.name, i.text, i.data_class) for i in caller_context),
        request_skills=tuple(skills),
    )


def send_request_from_messages(
    *,
    messages: Sequence[Any],
    input_data_class: str | None,
    api_client: ApiClient,
    configuration: Configuration,
    caller_context: Sequence[CallerContextItem] = (),
    request_skills: Sequence[int] = (),
) -> SendRequest:
    """The per-request part of a send whose task is a conversation (OpenAI's message shape; see
    :mod:`agents.runtime.conversation`). Messages without a class take ``input_data_class``, else the
    client's default. Raises ``InvalidMessage`` naming the field, or :class:`UnknownSkills`."""
    skills = _request_skills(api_client=api_client, skill_ids=request_skills)
    conversation = Conversation(
        default_class=input_data_class or api_client.default_input_data_class,
        allow_system_override=configuration.allow_system_override,
        caller_context=tuple(ContextItem(i.name, i.text, i.data_class) for i in caller_context),
        request_skills=tuple(skills),
    )
    return conversation_request(messages, conversation)


def _request_skills(*, api_client: ApiClient | None, skill_ids: Sequence[int]) -> list[Skill]:
    """The skills a request names, if it may name every one: each must exist, be enabled and be
    visible to the client. Otherwise :class:`UnknownSkills` names the ids refused, whatever the
    reason, in one shape, so that ids cannot be probed."""
    skills, refused = skills_usable_by(api_client=api_client, skill_ids=skill_ids)
    if refused:
        raise UnknownSkills(f"Unknown skills: {', '.join(map(str, refused))}.", extra={"skills": refused})
    return skills


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


def completion_create(
    *,
    configuration: Configuration,
    api_client: ApiClient,
    request: SendRequest,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> Completion:
    """One governed call outside any run; the request id correlates its governance events.

    Raises :class:`ContextRefused` (events recorded, nothing sent), ``ContextOverflow`` (nothing sent),
    ``ProviderError`` (sent, the provider failed), :class:`MaxTokensTooLarge` (nothing sent) or
    :class:`ConfigurationInactive`. Stores no run; the serving model's calibration takes the
    provider-reported prompt size as a step's does.
    """
    request_id, plan, events = _completion_start(configuration, api_client, request, max_tokens)
    outcome = governed_send(plan, events, max_tokens=max_tokens, temperature=temperature)
    _raise_unless_sent(outcome, request_id)
    assert outcome.fitted is not None and outcome.reply is not None and outcome.served is not None
    served_model_calibrate(plan=plan, fitted=outcome.fitted, served=outcome.served, usage=outcome.reply.usage)
    record = completion_record(
        request_id=request_id,
        api_client=api_client,
        configuration=configuration,
        served=outcome.served,
        reply=outcome.reply,
    )
    return Completion(
        request_id=request_id,
        reply=outcome.reply,
        served=outcome.served,
        breakdown=outcome.fitted.breakdown,
        cost=record.cost,
        decision=outcome.decision,
        sent_redactions=dict(plan.redactions),
        reply_redactions=dict(outcome.reply_redactions),
    )


@dataclass(frozen=True)
class CompletionStream:
    """One governed call whose reply streams: its redacted deltas (``stream``, ending with the whole
    redacted reply), the model that serves it, its fit and the decision."""

    request_id: str
    stream: GovernedStream
    served: LlmModel
    plan: SendPlan
    fitted: FitResult
    decision: ContextDecision | None
    api_client: ApiClient

    def finished(self, reply: ProviderReply) -> Completion:
        """The finished call as :func:`completion_create` answers it (``reply`` is the stream's finish);
        the serving model's calibration takes the reported prompt size and its ledger row is written, as there."""
        served_model_calibrate(plan=self.plan, fitted=self.fitted, served=self.served, usage=reply.usage)
        record = completion_record(
            request_id=self.request_id,
            api_client=self.api_client,
            configuration=self.plan.configuration,
            served=self.served,
            reply=reply,
        )
        return Completion(
            request_id=self.request_id,
            reply=reply,
            served=self.served,
            breakdown=self.fitted.breakdown,
            cost=record.cost,
            decision=self.decision,
            sent_redactions=dict(self.plan.redactions),
            reply_redactions=dict(self.stream.reply_redactions),
        )


def completion_stream_open(
    *,
    configuration: Configuration,
    api_client: ApiClient,
    request: SendRequest,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> CompletionStream:
    """:func:`completion_create` with the reply streamed: raises the same errors up to the provider's
    first delta (a target that fails before it is retried or falls back); after that a broken stream
    raises ``ProviderError`` from the stream. The caller must read the stream to its end or close it."""
    request_id, plan, events = _completion_start(configuration, api_client, request, max_tokens)
    outcome = governed_stream(plan, events, max_tokens=max_tokens, temperature=temperature)
    _raise_unless_sent(outcome, request_id)
    assert outcome.fitted is not None and outcome.stream is not None and outcome.served is not None
    return CompletionStream(
        request_id=request_id,
        stream=outcome.stream,
        served=outcome.served,
        plan=plan,
        fitted=outcome.fitted,
        decision=outcome.decision,
        api_client=api_client,
    )


def _completion_start(
    configuration: Configuration, api_client: ApiClient, request: SendRequest, max_tokens: int | None
) -> tuple[str, SendPlan, EventContext]:
    if not configuration.is_active:
        raise ConfigurationInactive(f"Configuration {configuration.identifier!r} is not active.")
    request_id = uuid.uuid4().hex
    log_context_update(correlation_id=request_id)  # the id of this call's governance events
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
    return request_id, plan, events


def _raise_unless_sent(outcome: SendOutcome | StreamOutcome, request_id: str) -> None:
    """Raise what kept ``outcome`` from being sent (or its provider failure); return when it was sent."""
    if outcome.inactive is not None:
        raise outcome.inactive
    if outcome.refusal is not None:
        refusal = outcome.refusal
        raise ContextRefused(refusal.message, extra={**refusal.extra, "request_id": request_id})
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
    reply: ProviderReply,
) -> CompletionRecord:
    """The ledger row of a served completion: its reported usage and its cost (for the reports)."""
    usage = reply.usage
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
