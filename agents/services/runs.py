"""Writes for runs, and the per-request part of a send built from what a caller asked for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from agents.errors import MediaRefused
from agents.models import AgentRun, RunStatus, TerminationReason
from agents.models.runs import TERMINAL_STATUSES
from agents.runtime.budget import budget_require
from agents.runtime.conversation import Conversation, conversation_request
from agents.runtime.parts import snippet_selection
from agents.runtime.pins import configuration_pins_take
from agents.runtime.plan import active_targets, receiver_name
from agents.runtime.queue import step_enqueue
from agents.runtime.redactions import Redactions, redaction_events_record
from agents.runtime.request import SendRequest
from agents.runtime.run_media import run_media_check, stored_media
from agents.runtime.targets import reply_limit_check
from agents.telemetry import run_span_attributes
from catalog.errors import ConfigurationInactive, UnknownSkills
from catalog.models import ApiClient, Configuration
from catalog.selectors import catalog_token_of, configuration_fallbacks, skills_usable_by
from config.tracing import traced
from context_assembly.assembly import ContextItem
from governance.services import EventContext
from governance.vocabulary import DataClass, TrustZone, least_trusted
from skills.models import Skill


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
    receiver_zone: TrustZone | None = None,
) -> AgentRun:
    """Create a run and enqueue its first step when the transaction commits.

    The task is ``input_text``, or ``messages``: a conversation in OpenAI's shape whose first user
    message is the task (:mod:`agents.runtime.conversation`; ``input_text`` is then ignored and
    ``input_data_class`` is the class of every message without its own). The task input's class
    defaults to the client's default class (docs/governance.md, "Sources"). The input, the caller
    context (names and texts) and the conversation are stored redacted, with one ``secret_redacted``
    event per kind found. The run pins the versions of its configuration, snippets and skills
    (``agents/runtime/pins.py``). Nothing is stored or enqueued when validation fails, including a
    ``max_tokens`` above every active target's output limit (:class:`MaxTokensTooLarge`), and a
    client whose daily budget is already spent (:class:`BudgetExhausted`, its event recorded).

    The run's answers are for its receiver, and every step is gated for the receiver's zone: the
    client's ``trust_zone``; without a client, ``receiver_zone`` as its operator names it (default
    ``local``: the operator reads in the service's own zone). Given with a client, the less trusted
    of the two applies.
    """
    if not configuration.is_active:
        raise ConfigurationInactive(f"Configuration {configuration.identifier!r} is not active.")
    active, _ = active_targets((configuration.model, *configuration_fallbacks(configuration)))
    reply_limit_check(active, max_tokens)
    if api_client is not None:  # each step reserves its own send; a spent budget refuses the run now
        budget_require(client=api_client)
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
                allow_remote_media=configuration.allow_remote_media,
            ),
        )
        if conversation.transcript_media:
            # The run's stored transcript keeps text; an image or a PDF after the task would be
            # dropped from every step without a word.
            raise MediaRefused(
                "messages: a run takes images and files in its task (the first user message) only",
                extra={"field": "messages"},
            )
        run_media_check(conversation.task_input_media, active)
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
            receiver_zone=run_receiver_zone(api_client, receiver_zone),
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
    return {
        "task_input": request.task_input_identifier,
        "task_input_media": stored_media(request.task_input_media, redactions),
        "system_override": [_stored_item(item, redactions) for item in request.system_override],
        "transcript": [
            {
                **redactions.message(entry.message).to_openai(),
                "data_class": entry.data_class,
                "identifier": entry.identifier or f"transcript[{index}]",
            }
            for index, entry in enumerate(request.transcript)
        ],
    }


def run_cancel(*, run: AgentRun) -> AgentRun:
    """Ask a run to stop. Honoured at the next step boundary; a run no worker holds (queued, or paused
    for an approval) stops now."""
    AgentRun.objects.filter(id=run.id).exclude(status__in=TERMINAL_STATUSES).update(cancel_requested=True)
    unheld = (RunStatus.QUEUED, RunStatus.AWAITING_APPROVAL)
    AgentRun.objects.filter(id=run.id, status__in=unheld, lease_owner="").update(
        status=RunStatus.CANCELLED, termination_reason=TerminationReason.CANCELLED, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


def run_receiver_zone(api_client: ApiClient | None, named: TrustZone | None) -> TrustZone:
    """The zone a run's answers are delivered to (see :func:`run_create`)."""
    if api_client is None:
        return named if named is not None else TrustZone.LOCAL
    return api_client.zone if named is None else least_trusted((api_client.zone, named))


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
        receiver_zone=api_client.zone,
        receiver_name=receiver_name(api_client),
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
        allow_remote_media=configuration.allow_remote_media,
        caller_context=tuple(ContextItem(i.name, i.text, i.data_class) for i in caller_context),
        request_skills=tuple(skills),
    )
    request = conversation_request(messages, conversation)
    return replace(request, receiver_zone=api_client.zone, receiver_name=receiver_name(api_client))


def _request_skills(*, api_client: ApiClient | None, skill_ids: Sequence[int]) -> list[Skill]:
    """The skills a request names, if it may name every one: each must exist, be enabled and be
    visible to the client. Otherwise :class:`UnknownSkills` names the ids refused, whatever the
    reason, in one shape, so that ids cannot be probed."""
    skills, refused = skills_usable_by(api_client=api_client, skill_ids=skill_ids)
    if refused:
        raise UnknownSkills(f"Unknown skills: {', '.join(map(str, refused))}.", extra={"skills": refused})
    return skills
