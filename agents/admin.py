"""Tool approvals in admin: each run's approvals on its page, and a page to approve or deny a call.

A decision needs the ``agents.decide_toolapproval`` permission and goes through
:func:`agents.services.approval_decide`, as the API's does: decided once, recorded as a governance
event, the run resumed.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from agents.errors import ApprovalDecided, RunFinished
from agents.models import ApprovalDecision, ToolApproval
from agents.models.approvals import MAX_REASON_CHARS
from agents.services import approval_decide
from governance.actors import request_actor
from governance.admin import ReadOnlyAdminMixin

DECIDE_PERMISSION = "agents.decide_toolapproval"


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[(ApprovalDecision.APPROVED, "Approve"), (ApprovalDecision.DENIED, "Deny")],
        widget=forms.RadioSelect,
    )
    reason = forms.CharField(max_length=MAX_REASON_CHARS, widget=forms.Textarea(attrs={"rows": 3}))


def _decide_link(approval: ToolApproval) -> str:
    url = reverse("admin:agents_toolapproval_decide", args=[approval.pk])
    return format_html('<a href="{}">{}</a>', url, "Decide" if approval.is_pending else "View")


class ToolApprovalInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = ToolApproval
    extra = 0
    ordering = ("requested_at",)
    fields = (
        "step_index", "tool_name", "call_id", "untrusted_sources", "decision", "decided_by", "reason",
        "requested_at", "expires_at", "decide",
    )  # fmt: skip
    readonly_fields = fields

    @admin.display(description="")
    def decide(self, obj: ToolApproval) -> str:
        return _decide_link(obj)


@admin.register(ToolApproval)
class ToolApprovalAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "tool_name",
        "run",
        "step_index",
        "decision",
        "decided_by",
        "requested_at",
        "expires_at",
        "decide",
    )
    list_filter = ("decision", "tool_name")
    search_fields = ("run__id", "tool_name", "call_id")
    fields = (
        "run", "step_index", "call_id", "tool_name", "arguments", "label", "tool_class", "untrusted_context",
        "untrusted_sources", "decision", "decided_by", "reason", "requested_at", "expires_at", "decided_at",
    )  # fmt: skip
    readonly_fields = fields

    @admin.display(description="")
    def decide(self, obj: ToolApproval) -> str:
        return _decide_link(obj)

    def get_urls(self) -> list[URLPattern]:
        decide = path(
            "<uuid:approval_id>/decide/",
            self.admin_site.admin_view(self.decide_view),
            name="agents_toolapproval_decide",
        )
        return [decide, *super().get_urls()]

    def decide_view(self, request: HttpRequest, approval_id: str) -> HttpResponse:
        if not request.user.has_perm(DECIDE_PERMISSION):
            raise PermissionDenied
        approval = get_object_or_404(ToolApproval.objects.select_related("run"), pk=approval_id)
        form = DecisionForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                decided = approval_decide(
                    run=approval.run,
                    approval_id=str(approval.pk),
                    decision=ApprovalDecision(form.cleaned_data["decision"]),
                    reason=form.cleaned_data["reason"],
                    actor=request_actor(request),
                )
            except (ApprovalDecided, RunFinished) as refused:
                self.message_user(request, refused.message, messages.ERROR)
            else:
                self.log_change(request, decided, f"Tool call {decided.decision}.")
                self.message_user(request, f"The call to {decided.tool_name} was {decided.decision}.")
            return HttpResponseRedirect(reverse("admin:agents_toolapproval_decide", args=[approval.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Tool call {approval.tool_name}",
            "opts": self.model._meta,
            "approval": approval,
            "run_finished": approval.run.is_terminal,
            "form": form,
        }
        return TemplateResponse(request, "admin/agents/toolapproval/decide.html", context)
