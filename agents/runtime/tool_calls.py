"""Executing the tool calls a model asked for, through the same gate that offered the tools.

Each call is claimed in ``ToolCallRecord`` before it runs. A ``non_idempotent_write`` call found
claimed but without a recorded result (its worker died mid-call) is never run again: the model is
told its outcome is unknown. A tool exception becomes a generic error text for the model; the details
go to the log, never to the transcript. A ``ToolFailed`` (an MCP server down or slow) gives the model
its own sentence and records a ``tool_failed`` (or ``tool_denied``) event; the run goes on.

A call is claimed, and its result stored, only while the step's worker still holds the run's lease,
checked in the same transaction (:func:`agents.runtime.leases.lease_hold`): a worker whose step was
taken over starts no tool and stores no result (:class:`agents.runtime.leases.LeaseLost`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from django.db import IntegrityError, connection, transaction

from agents.models import AgentRun, AgentStep, RunMessage, ToolCallRecord, ToolCallStatus
from agents.runtime.approvals import approval_hold
from agents.runtime.held_writes import Statement, held_insert
from agents.runtime.injection_screening import screened
from agents.runtime.leases import HeldLease, advanced_values, lease_hold
from agents.runtime.parts import configuration_parts
from agents.runtime.plan import configuration_receiver, send_zone, tool_policy
from agents.runtime.quarantine import held_reference
from agents.runtime.redactions import Redactions, redaction_events_record
from agents.runtime.transcript import TRANSCRIPTS, run_context
from agents.runtime.untrusted import untrusted_named, untrusted_sources
from agents.selectors import run_client_name
from catalog.models import Configuration
from catalog.models.sql import executed
from catalog.selectors import catalog_token_of, configuration_zone
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import DataClass, Decision, Integrity, TrustZone
from tools.gate import ToolDenial, ToolVerdict, tool_gate
from tools.registry import REGISTRY, ToolContext, ToolEffect, ToolFailed, ToolOutput

logger = logging.getLogger(__name__)


class ToolCallsDone(StrEnum):
    """How :func:`execute_tool_calls` left a step's tool calls."""

    WAITING = "waiting"  # a call waits for a decision
    ANSWERED = "answered"  # every call answered; the run is still at this step
    ADVANCED = "advanced"  # every call answered, and the run moved to its next step


OUTCOME_UNKNOWN = "The outcome of this call is unknown (it was interrupted); it was not repeated."
TOOL_FAILED = "The tool failed. No details are available."


# ``execute_tool_calls``'s ``receipt`` when the caller does not hold the step's receipt: it is read.
STEP_RECEIPT_UNREAD: Any = object()


def execute_tool_calls(
    *,
    run: AgentRun,
    step_index: int,
    worker: str,
    assistant: RunMessage,
    recorded_now: bool = False,
    receipt: dict[str, Any] | None = STEP_RECEIPT_UNREAD,
) -> ToolCallsDone:
    """Run every call of ``assistant`` that has no result message yet, in order. ``recorded_now``:
    ``assistant`` was stored by this attempt of the step, so no call can have a result yet (results are
    stored only after their assistant message) and the results are not read: they take the positions
    right after the assistant message's, in order, without counting the transcript. ``receipt``: the
    step's receipt as this attempt stored it (else it is read from the step's row).

    Raises :class:`agents.runtime.leases.LeaseLost` when ``worker`` no longer holds the run's lease at this step.

    ``WAITING`` when a call waits for approval (agents/runtime/approvals.py): the calls before it are
    answered, it and the calls after it are not. ``ADVANCED`` when the last call's result was stored
    with nothing left to record after it: the same statement moved the run to the next step and
    released the lease (:func:`agents.runtime.leases.advanced_values`); the caller enqueues that
    step. ``ANSWERED`` otherwise: every call is answered and the run is still at this step."""
    lease = HeldLease(run_id=str(run.id), step_index=step_index, worker=worker)
    answered: set[str] = set()
    position = assistant.position + 1 if recorded_now else None
    if not recorded_now:
        answered = set(
            RunMessage.objects.filter(run=run, role="tool", step_index=step_index).values_list(
                "tool_call_id", flat=True
            )
        )
    configuration = run.configuration
    parts = configuration_parts(configuration)
    if receipt is STEP_RECEIPT_UNREAD:
        receipt = (
            AgentStep.objects.filter(run=run, index=step_index).values_list("receipt", flat=True).first()
        )
    zone = _step_zone(receipt, configuration) or send_zone(configuration, parts.fallbacks)
    receiver = configuration_receiver(configuration, TrustZone.parse(run.receiver_zone))
    # The reply's integrity: a reply stored without one (before levels were kept) reads as untrusted.
    integrity = Integrity.parse(assistant.integrity)
    policy = tool_policy(configuration, zone, parts.disabled_tools, receiver, integrity)
    tool_context = ToolContext(
        run=run_context(run),
        zone=zone,
        configuration=configuration.identifier,
        step_index=step_index,
        label=DataClass.parse(assistant.data_class) or DataClass.SECRET_ADJACENT,
        catalog=catalog_token_of(configuration),
    )
    tool_names = [tool.name for tool in REGISTRY.named(policy.allowed_tools, policy.allowed_groups)]
    for call in assistant.tool_calls:
        if call["id"] in answered:
            continue
        verdict = tool_gate(call["name"], policy)
        untrusted = untrusted_sources(run, receipt) if verdict.held or _refused_untrusted(verdict) else []
        hold = approval_hold(
            run=run,
            step_index=step_index,
            call=call,
            verdict=verdict,
            assistant=assistant,
            untrusted=untrusted,
        )
        if hold.waiting:
            return ToolCallsDone.WAITING
        # Only a result the tool returned carries the tool's integrity; the service's own answers
        # (a refusal, a denial) are trusted.
        result_integrity, status = Integrity.TRUSTED, None
        if hold.refusal is not None:
            content, data_class = hold.refusal, verdict.data_class
        elif verdict.allowed:
            content, data_class, declared, status = _execute(run, lease, call, verdict, tool_context)
            result_integrity = _result_integrity(verdict, declared)
        else:
            _record_denial(run, step_index, verdict, zone.value, untrusted)
            content, data_class = _denial_text(verdict), DataClass.PUBLIC_CONTENT
        redactions = Redactions()
        text = redactions.text(content)
        screening = screened(text, result_integrity, call["name"], tool_names)
        result = _Result(screening.content, data_class, result_integrity, screening.stored, status)
        if configuration.quarantine_untrusted and result_integrity == Integrity.UNTRUSTED:
            # Held back: the planner sees the service's own reference line (quarantine.py).
            # Held back unfenced: the quarantined read fences it (quarantine.py).
            reference = held_reference(call["id"], call["name"], text)
            result = replace(result, content=reference, integrity=Integrity.TRUSTED, held=text)
        # The last result with no redaction event to record after it: nothing of this step is
        # left to do once it is stored, so its statement also moves the run on.
        advance = call is assistant.tool_calls[-1] and not redactions.counts
        _store_result(run, lease, call, result, position, advance=advance)
        if advance:
            return ToolCallsDone.ADVANCED
        position = position + 1 if position is not None else None
        redaction_events_record(counts=redactions.counts, context=_events(run, step_index), zone=zone)
    return ToolCallsDone.ANSWERED


def _step_zone(receipt: dict[str, Any] | None, configuration: Configuration) -> TrustZone | None:
    """The zone of a step that was routed to its configuration's trusted model (its receipt names the
    zone it left): its tools were offered for the trusted model's zone, so they run for it too. None
    for a step that was not routed."""
    trusted = configuration.trusted_model
    if not receipt or not receipt.get("routed_from") or trusted is None:
        return None
    return configuration_zone(configuration, serving_model=trusted, fallbacks=())


def _execute(
    run: AgentRun, lease: HeldLease, call: dict[str, Any], verdict: ToolVerdict, context: ToolContext
) -> tuple[str, DataClass, str, ToolCallStatus | None]:
    """The result text, its class (the tool's, or the stricter class a ToolOutput declares), the
    integrity level a ToolOutput declares (empty: none) and the status the call's record takes with
    its result (None: it keeps its own)."""
    result, status = _run_handler(run, lease, call, verdict, context)
    if isinstance(result, ToolOutput):
        declared = DataClass.parse(result.data_class) or DataClass.SECRET_ADJACENT
        text, data_class = result.text, max(declared, verdict.data_class, key=lambda c: c.rank)
        return text, data_class, result.integrity, status
    return result, verdict.data_class, "", status


def _run_handler(
    run: AgentRun, lease: HeldLease, call: dict[str, Any], verdict: ToolVerdict, context: ToolContext
) -> tuple[str | ToolOutput, ToolCallStatus | None]:
    """The call claimed and run: its result, and how the call ended (``completed`` or ``failed``),
    which its record takes in the statement that stores the result (:func:`_store_result`); None for
    a call that was not run again (its record stays as it was)."""
    tool = verdict.tool
    assert tool is not None
    step_index = lease.step_index
    try:
        # The claim commits with the lease check (agents/runtime/held_writes.py).
        held_insert(
            lease,
            ToolCallRecord,
            run=run,
            step_index=step_index,
            call_id=call["id"],
            tool_name=tool.name,
            effect=tool.effect,
            status=ToolCallStatus.STARTED,
        )
    except IntegrityError:
        record = ToolCallRecord.objects.get(run=run, call_id=call["id"])
        if tool.effect == ToolEffect.NON_IDEMPOTENT_WRITE:
            return OUTCOME_UNKNOWN, None
        record.attempts += 1
        record.save(update_fields=["attempts", "updated_at"])
    try:
        arguments = json.loads(call["arguments"] or "{}")
        if not isinstance(arguments, dict):
            raise ValueError("arguments must be a JSON object")
    except ValueError:
        return "The tool call's arguments are not a JSON object.", ToolCallStatus.FAILED
    try:
        result = tool.handler(context, arguments)
    except ToolFailed as failure:
        enforced_event_record(
            context=_events(run, step_index),
            decision=Decision.TOOL_DENIED if failure.denied else Decision.TOOL_FAILED,
            reason=f"{tool.name}: {failure}",
        )
        return str(failure), ToolCallStatus.FAILED
    except Exception:
        logger.exception("tool %s failed in run %s step %s", tool.name, run.id, step_index)
        return TOOL_FAILED, ToolCallStatus.FAILED
    return (result if isinstance(result, ToolOutput) else str(result)), ToolCallStatus.COMPLETED


def _events(run: AgentRun, step_index: int) -> EventContext:
    return EventContext(
        correlation_id=str(run.id),
        configuration=run.configuration.identifier,
        api_client=run_client_name(run),
        run=str(run.id),
        step=step_index,
    )


def _refused_untrusted(verdict: ToolVerdict) -> bool:
    return verdict.denial == ToolDenial.UNTRUSTED_CONTEXT


def _result_integrity(verdict: ToolVerdict, declared: str) -> Integrity:
    """A trusted tool's result: trusted, or the level it declares (an unknown one reads as untrusted);
    any other tool's: untrusted."""
    if verdict.tool is None or not verdict.tool.trusted:
        return Integrity.UNTRUSTED
    return Integrity.parse(declared) if declared else Integrity.TRUSTED


def _denial_text(verdict: ToolVerdict) -> str:
    if _refused_untrusted(verdict):
        return f"The call to '{verdict.name}' was not run: it acts on the world and untrusted content is in this context."
    return f"Tool '{verdict.name}' is not available."


def _record_denial(
    run: AgentRun, step_index: int, verdict: ToolVerdict, zone: str, untrusted: list[str]
) -> None:
    if _refused_untrusted(verdict):
        reason = f"{verdict.name}: {verdict.denial.value} (untrusted: {untrusted_named(untrusted)})"
    else:
        reason = f"{verdict.name}: {verdict.denial.value} ({verdict.data_class.value} in {zone})"
    enforced_event_record(context=_events(run, step_index), decision=Decision.TOOL_DENIED, reason=reason)


@dataclass(frozen=True)
class _Result:
    content: str  # redacted
    data_class: DataClass
    integrity: Integrity
    screening: str  # the injection rules screening found, comma-separated
    status: ToolCallStatus | None  # the call record's status from this result on (None: unchanged)
    held: str = ""  # a result held back from the planner (the content is then its reference line)


def _store_result(
    run: AgentRun,
    lease: HeldLease,
    call: dict[str, Any],
    result: _Result,
    position: int | None,
    *,
    advance: bool,
) -> None:
    """Store the result at ``position``, or (None) after every message of the run: the transcript's
    length, counted in the same transaction as the insert, after the lease check. The call's record
    takes the result's status in the same statement or transaction: a record reads ``completed`` or
    ``failed`` only once its result is stored. With ``advance``, the lease check moves the run to
    the next step and releases the lease instead of renewing it."""
    run_values = advanced_values(lease.step_index + 1) if advance else None
    then: tuple[Statement, ...] = ()
    if result.status is not None:
        mark = ToolCallRecord.objects.status_set_sql(run_id=run.pk, call_id=call["id"], status=result.status)
        then = (mark,)
    fields = {
        "run": run,
        "step_index": lease.step_index,
        "role": "tool",
        "content": result.content,
        "tool_call_id": call["id"],
        "tool_name": call["name"],
        "data_class": result.data_class,
        "integrity": result.integrity,
        "screening": result.screening,
        "quarantined": result.held,
    }
    if position is not None:  # one statement with the lease check (agents/runtime/held_writes.py)
        stored = held_insert(lease, RunMessage, position=position, then=then, run_values=run_values, **fields)
    else:
        with transaction.atomic():
            lease_hold(lease, run_values)
            stored = RunMessage.objects.create(position=RunMessage.objects.filter(run=run).count(), **fields)
            with connection.cursor() as cursor:
                for statement in then:
                    executed(cursor, *statement)
    # The run's next step, in this worker, reads its transcript from the one held here.
    transaction.on_commit(lambda: TRANSCRIPTS.written(stored))
