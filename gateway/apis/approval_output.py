"""How a tool call waiting for approval looks in the API (run detail, run events, a decision)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from agents.models import AgentRun, ApprovalDecision, ToolApproval
from governance.policy import Source, receiver_may_read
from governance.vocabulary import Enforcement, SourceKind, TrustZone


class ToolApprovalSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    step_index = serializers.IntegerField()
    tool_call_id = serializers.CharField()
    tool_name = serializers.CharField()
    arguments = serializers.CharField(
        allow_blank=True, required=False, help_text="JSON text, redacted. Left out when withheld."
    )
    label = serializers.CharField(
        help_text="The label of the assistant turn that asked for the call, for the run's receiver."
    )
    tool_class = serializers.CharField(help_text="The class of what the tool returns.")
    untrusted_context = serializers.BooleanField(
        help_text="True: asked for because the call acts on the world and untrusted content was in the "
        "context of the turn that asked for it (its instructions may not be the caller's)."
    )
    untrusted_sources = serializers.ListField(
        child=serializers.CharField(),
        help_text="That untrusted content, named (kind:identifier, a tool result with its tool).",
    )
    withheld = serializers.BooleanField(
        help_text="True: the call was asked for by a turn labelled above this client's trust zone; "
        "its arguments are left out, and only a denial is open to the client."
    )
    decision = serializers.ChoiceField(choices=ApprovalDecision.choices)
    decided_by = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_blank=True, help_text="Redacted.")
    requested_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "ToolApproval"


def approval_readable(approvals: list[ToolApproval], receiver_zone: TrustZone) -> tuple[bool, ...]:
    """For each approval, whether a reader in ``receiver_zone`` may see its arguments: as it may read
    the assistant turn that asked for the call (its label for the run's receiver)."""
    sources = [
        Source(SourceKind.ASSISTANT_TURN, approval.call_id, approval.label, None, Enforcement.ENFORCE)
        for approval in approvals
    ]
    return receiver_may_read(sources, receiver_zone)


def approval_body(approval: ToolApproval, shown: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": approval.id,
        "step_index": approval.step_index,
        "tool_call_id": approval.call_id,
        "tool_name": approval.tool_name,
        "label": approval.label,
        "tool_class": approval.tool_class,
        "untrusted_context": approval.untrusted_context,
        "untrusted_sources": approval.untrusted_sources,
        "withheld": not shown,
        "decision": approval.decision,
        "decided_by": approval.decided_by,
        "reason": approval.reason,
        "requested_at": approval.requested_at,
        "expires_at": approval.expires_at,
        "decided_at": approval.decided_at,
    }
    if shown:
        body["arguments"] = approval.arguments
    return body


def approval_bodies(run: AgentRun, receiver_zone: TrustZone) -> list[dict[str, Any]]:
    """The run's approvals, oldest first, as a reader in ``receiver_zone`` may see them."""
    approvals = list(ToolApproval.objects.filter(run=run).order_by("requested_at", "call_id"))
    readable = approval_readable(approvals, receiver_zone)
    return [approval_body(a, shown) for a, shown in zip(approvals, readable, strict=True)]
