"""Tool calls that wait for a person's decision (docs/architecture.md, "Tool approvals").

A tool registered with ``requires_approval`` is gated like any other (tools/gate.py), and so is a
consequential call the gate held because untrusted content was in the step's context (its approval
names that content). A call the gate allows does not run at once: the tool phase asks :func:`approval_hold`, which stores a
pending :class:`~agents.models.ToolApproval` (arguments redacted) and records an
``approval_requested`` event the first time, and answers *wait* while no decision is in. The step
then pauses the run (:func:`run_pause`): status ``awaiting_approval``, lease released, no message
queued, so no worker and no thread waits for the person.

A decision (agents/services/approvals.py) moves the run back to ``running`` without a lease and
queues its step again. The step is recorded, so the redelivered step goes straight to its tool phase
(agents/runtime/step.py): an approved call then runs through the tool gate, checked again at that
moment; a denied or expired one gets :func:`refusal_text` as its result, and the run goes on.

Only the first waiting call of a step is held at a time: calls are answered in order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import AgentRun, ApprovalDecision, RunMessage, RunStatus, ToolApproval
from agents.models.runs import TERMINAL_STATUSES
from agents.runtime.untrusted import untrusted_named
from agents.selectors import run_client_name
from governance.guardrails.redaction import redact
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import DataClass, Decision
from tools.gate import ToolVerdict

APPROVAL_EVENTS = {
    ApprovalDecision.PENDING: Decision.APPROVAL_REQUESTED,
    ApprovalDecision.APPROVED: Decision.APPROVAL_GRANTED,
    ApprovalDecision.DENIED: Decision.APPROVAL_DENIED,
    ApprovalDecision.EXPIRED: Decision.APPROVAL_EXPIRED,
}


def approval_timeout_seconds() -> int:
    return int(settings.AGENT_APPROVAL_TIMEOUT_SECONDS)


@dataclass(frozen=True)
class Hold:
    """What the tool phase does with one call: run it, wait, or answer ``refusal`` instead."""

    waiting: bool = False
    refusal: str | None = None


PROCEED = Hold()
WAIT = Hold(waiting=True)


def approval_hold(
    *,
    run: AgentRun,
    step_index: int,
    call: dict[str, Any],
    verdict: ToolVerdict,
    assistant: RunMessage,
    untrusted: list[str] | None = None,
) -> Hold:
    """Whether ``call`` may run now. A call the gate denies, or that needs no approval (its tool does
    not ask for one and it was not held for an untrusted context), proceeds (the gate's denial is
    answered as usual). The first time a call needs approval, its pending approval (naming
    ``untrusted``, the untrusted sources of the step's context, for a held call) and the
    ``approval_requested`` event are stored in one transaction."""
    if not verdict.requires_approval:
        return PROCEED
    approval = ToolApproval.objects.filter(run=run, call_id=call["id"]).first()
    if approval is None:
        named = list(untrusted or []) if verdict.held else []
        approval = _approval_request(run, step_index, call, verdict, assistant, named)
    if approval.decision == ApprovalDecision.APPROVED:
        return PROCEED
    if approval.decision in (ApprovalDecision.DENIED, ApprovalDecision.EXPIRED):
        return Hold(refusal=refusal_text(approval))
    return WAIT


def refusal_text(approval: ToolApproval) -> str:
    """The result the model receives for a call that was denied or expired."""
    if approval.decision == ApprovalDecision.EXPIRED:
        return f"The call to '{approval.tool_name}' was not run: no one approved it in time."
    because = f" Reason: {approval.reason}" if approval.reason else ""
    return f"The call to '{approval.tool_name}' was not run: a reviewer denied it.{because}"


def _approval_request(
    run: AgentRun,
    step_index: int,
    call: dict[str, Any],
    verdict: ToolVerdict,
    assistant: RunMessage,
    untrusted: list[str],
) -> ToolApproval:
    now = timezone.now()
    approval = ToolApproval(
        run=run,
        step_index=step_index,
        call_id=call["id"],
        tool_name=verdict.name,
        arguments=redact(_arguments_text(call)).text,
        label=DataClass.parse(assistant.receiver_class) or DataClass.SECRET_ADJACENT,
        tool_class=verdict.data_class,
        untrusted_context=verdict.held,
        untrusted_sources=untrusted,
        requested_at=now,
        expires_at=now + timedelta(seconds=approval_timeout_seconds()),
    )
    approval.full_clean()
    try:
        with transaction.atomic():
            approval.save(force_insert=True)
            approval_event_record(approval, actor="runtime")
    except IntegrityError:  # another attempt of this step stored it first
        return ToolApproval.objects.get(run=run, call_id=call["id"])
    return approval


def _arguments_text(call: dict[str, Any]) -> str:
    """The arguments as the model sent them, re-serialised compactly when they are JSON."""
    raw = call.get("arguments") or ""
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False, sort_keys=True)
    except ValueError:
        return str(raw)


def approval_event_record(approval: ToolApproval, *, actor: str) -> None:
    """The governance event of ``approval``'s current decision (requested while pending). It names the
    tool, the call and who decided; never the arguments nor the reviewer's reason, which are free text
    (they stay on the approval, redacted)."""
    run = approval.run
    call = f"{approval.tool_name} ({approval.call_id})"
    if approval.is_pending:
        reason = f"{call} waits for approval until {approval.expires_at:%Y-%m-%dT%H:%M:%SZ}"
        if approval.untrusted_context:
            reason += f"; untrusted context: {untrusted_named(approval.untrusted_sources)}"
    else:
        reason = f"{call} {approval.decision} by {actor}"
    enforced_event_record(
        context=EventContext(
            correlation_id=str(run.id),
            configuration=run.configuration.identifier,
            api_client=run_client_name(run),
            run=str(run.id),
            step=approval.step_index,
        ),
        decision=APPROVAL_EVENTS[ApprovalDecision(approval.decision)],
        reason=reason,
    )


class Pause(StrEnum):
    PAUSED = "paused"  # the run awaits a decision; the lease is released
    DECIDED = "decided"  # a decision came in meanwhile: answer the calls again
    LEASE_LOST = "lease_lost"


def run_pause(*, run: AgentRun, worker: str, step_index: int) -> Pause:
    """Pause the run at ``step_index`` while one of the step's approvals is pending, if ``worker``
    still holds the lease. The pending row is locked first, as a decision locks it, so a decision
    either lands before (and the calls are answered again) or finds the run paused and resumes it."""
    with transaction.atomic():
        pending = list(
            ToolApproval.objects.select_for_update()
            .filter(run=run, step_index=step_index, decision=ApprovalDecision.PENDING)
            .values_list("id", flat=True)
        )
        if not pending:
            return Pause.DECIDED
        paused = (
            AgentRun.objects.filter(id=run.id, lease_owner=worker, next_step_index=step_index)
            .exclude(status__in=TERMINAL_STATUSES)
            .update(
                status=RunStatus.AWAITING_APPROVAL,
                lease_owner="",
                lease_expires_at=None,
                updated_at=timezone.now(),
            )
        )
    return Pause.PAUSED if paused else Pause.LEASE_LOST
