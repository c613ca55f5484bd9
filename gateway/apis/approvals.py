"""Tool calls waiting for approval: list a run's, and approve or deny one (scope ``runs:approve``).

A client decides only on its own runs: another client's run, or an approval of another run, answers
404 as an unknown id does. A call whose arguments the client may not read (the turn that asked for
it is labelled above the client's zone) can be denied but not approved: nobody approves blind.
"""

from __future__ import annotations

import uuid

from django.db.models import TextChoices
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.errors import ApprovalWithheld
from agents.models import AgentRun, ApprovalDecision, ToolApproval
from agents.models.approvals import MAX_REASON_CHARS
from agents.services import approval_decide
from catalog.errors import NotVisible
from config.api import operation_schema, validated
from gateway.apis.approval_output import (
    ToolApprovalSerializer,
    approval_bodies,
    approval_body,
    approval_readable,
)
from gateway.apis.context import client_of
from gateway.apis.runs import client_run

TAG = "runs"


class Verdict(TextChoices):
    APPROVE = "approve", "Approve: the call runs through the tool gate"
    DENY = "deny", "Deny: the model is told the call was not run"


DECISIONS = {Verdict.APPROVE: ApprovalDecision.APPROVED, Verdict.DENY: ApprovalDecision.DENIED}


class RunApprovalListApi(APIView):
    required_scope = "runs:read"

    @operation_schema(
        TAG, "A run's tool calls that need approval", ToolApprovalSerializer(many=True), errors=(404,)
    )
    def get(self, request: Request, run_id: str) -> Response:
        run = client_run(request, run_id)
        bodies = approval_bodies(run, client_of(request).zone)
        return Response(ToolApprovalSerializer(bodies, many=True).data)


class RunApprovalDecisionApi(APIView):
    required_scope = "runs:approve"

    class InputSerializer(serializers.Serializer):
        decision = serializers.ChoiceField(choices=Verdict.choices)
        reason = serializers.CharField(max_length=MAX_REASON_CHARS, help_text="Stored redacted.")

        class Meta:
            ref_name = "ToolApprovalDecisionInput"

    @operation_schema(
        TAG,
        "Approve or deny a tool call the run waits on",
        ToolApprovalSerializer,
        description=(
            "Decides once. Approved, the call runs through the tool gate and the run resumes on a "
            "worker; denied, the model receives a refusal as the tool's result and the run resumes."
        ),
        request=InputSerializer,
        errors=(400, 404, 409),
        s403="approval_withheld: the call's arguments are above this client's zone (deny only)",
        s409="approval_decided: already approved, denied or expired; run_finished: the run has ended",
    )
    def post(self, request: Request, run_id: str, approval_id: str) -> Response:
        data = validated(self.InputSerializer, request.data)
        run = client_run(request, run_id)
        client = client_of(request)
        approval = _run_approval(run, approval_id)
        verdict = Verdict(data["decision"])
        if verdict == Verdict.APPROVE and not approval_readable([approval], client.zone)[0]:
            raise ApprovalWithheld(
                "This call's arguments are above your trust zone; it can be denied, not approved.",
                extra={"approval": approval_id},
            )
        decided = approval_decide(
            run=run,
            approval_id=str(approval.id),
            decision=DECISIONS[verdict],
            reason=data["reason"],
            actor=client.as_actor(),
        )
        shown = approval_readable([decided], client.zone)[0]
        return Response(ToolApprovalSerializer(approval_body(decided, shown)).data)


def _run_approval(run: AgentRun, approval_id: str) -> ToolApproval:
    """``run``'s approval ``approval_id``; a malformed id reads as unknown, as a malformed run id does."""
    try:
        pk = uuid.UUID(approval_id)
    except ValueError:
        pk = None
    approval = ToolApproval.objects.filter(id=pk, run=run).first() if pk is not None else None
    if approval is None:
        raise NotVisible(
            f"There is no approval {approval_id!r} on this run.", extra={"approval": approval_id}
        )
    return approval
