"""Deciding a tool call that waits for approval, and expiring the ones nobody decided in time.

See agents/runtime/approvals.py for how a call comes to wait and what a decision does to the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from agents.errors import ApprovalDecided, RunFinished
from agents.models import AgentRun, ApprovalDecision, RunStatus, ToolApproval
from agents.models.approvals import MAX_REASON_CHARS
from agents.models.runs import TERMINAL_STATUSES
from agents.runtime.approvals import approval_event_record, approval_timeout_seconds
from agents.runtime.queue import step_enqueue
from catalog.errors import NotVisible
from governance.actors import Actor
from governance.guardrails.redaction import redact

REAPER_ACTOR = Actor.system("reaper")


@transaction.atomic
def approval_decide(
    *, run: AgentRun, approval_id: str, decision: ApprovalDecision, reason: str, actor: Actor
) -> ToolApproval:
    """Decide a pending approval of ``run`` once: store the decision (the reason redacted), record
    its governance event and, when the run is paused on it, move the run back to ``running`` without
    a lease and queue its step on commit. All of it in one transaction, or none of it.

    Raises :class:`NotVisible` for an approval that is not ``run``'s, :class:`ApprovalDecided` for
    one already decided, :class:`RunFinished` when the run has ended (nothing is stored then)."""
    if decision == ApprovalDecision.PENDING:
        raise ValueError("a decision is approved, denied or expired")
    approval = (
        ToolApproval.objects.select_for_update(of=("self",))
        .select_related("run__configuration", "run__api_client")
        .filter(id=approval_id, run=run)
        .first()
    )
    if approval is None:
        raise NotVisible(
            f"There is no approval {approval_id!r} on this run.", extra={"approval": approval_id}
        )
    if not approval.is_pending:
        raise ApprovalDecided(
            f"This call was already {approval.decision}.", extra={"decision": approval.decision}
        )
    if approval.run.is_terminal:
        raise RunFinished(
            f"Run {run.id} is already {approval.run.status}.", extra={"status": approval.run.status}
        )
    now = timezone.now()
    approval.decision = decision
    approval.decided_by = actor.label
    approval.reason = redact(reason).text[:MAX_REASON_CHARS] if reason else ""
    approval.decided_at = now
    approval.full_clean()
    approval.save(update_fields=["decision", "decided_by", "reason", "decided_at"])
    approval_event_record(approval, actor=actor.label)
    resumed = AgentRun.objects.filter(
        id=run.id, status=RunStatus.AWAITING_APPROVAL, next_step_index=approval.step_index
    ).update(status=RunStatus.RUNNING, lease_owner="", lease_expires_at=None, updated_at=now)
    if resumed:
        step_enqueue(run_id=str(run.id), step_index=approval.step_index)
    return approval


@dataclass(frozen=True)
class Expired:
    run_id: str
    approval_id: str


def approvals_expire(*, now: datetime | None = None) -> tuple[Expired, ...]:
    """Expire every pending approval past its time (the reaper calls this each sweep), each through
    :func:`approval_decide`; one decided meanwhile is skipped. A run that ended (cancelled while it
    waited) has nothing to resume: its approvals are left as they were."""
    now = now or timezone.now()
    overdue = ToolApproval.objects.filter(decision=ApprovalDecision.PENDING, expires_at__lt=now).exclude(
        run__status__in=TERMINAL_STATUSES
    )
    expired: list[Expired] = []
    for approval in overdue.select_related("run").order_by("expires_at"):
        try:
            approval_decide(
                run=approval.run,
                approval_id=str(approval.id),
                decision=ApprovalDecision.EXPIRED,
                reason=f"No decision within {approval_timeout_seconds()} seconds.",
                actor=REAPER_ACTOR,
            )
        except (ApprovalDecided, RunFinished):
            continue
        expired.append(Expired(str(approval.run_id), str(approval.id)))
    return tuple(expired)
