"""Runs in admin: read-only, with each step's context usage drawn against the window.

Runs are written by the runtime only. The editor actions are cancel, through
:func:`agents.services.run_cancel`, honoured at the next step boundary, and making evaluation cases of
runs (:func:`evaluations.datasets.evaluation_cases_from_runs`).
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import URLPattern, path
from django.utils.html import format_html

from agents.admin import ToolApprovalInline
from agents.models import AgentRun, AgentStep, RunMessage, StepKind, StepStatus
from agents.runtime.transcript import run_usage
from agents.services import run_cancel
from agents.templatetags.receipts import receipt_table
from context_assembly.usage import usage_from_step
from editors.admin.budget_bar import budget_bar
from editors.admin.charts import UsagePoint, usage_chart
from editors.admin.costs import cost_view
from editors.admin.retention import retention_view
from editors.admin.scores import RunScoreFilter
from evaluations.datasets import evaluation_cases_from_runs
from governance.admin import ReadOnlyAdminMixin
from governance.vocabulary import Provenance

CANCEL_PERMISSION = "agents.change_agentrun"
CASE_PERMISSION = "evaluations.add_evaluationcase"
SHORT_ID = 8  # characters of a run's id in the list: enough to tell runs apart at a glance


def _usage_label(step: AgentStep) -> str:
    usage = usage_from_step(step.reported_prompt_tokens, step.estimated_prompt_tokens)
    return "—" if usage.value is None else f"{usage.value:,} ({_provenance(usage.provenance)})"


def _provenance(provenance: str) -> str:
    """A provenance as it reads in a sentence ("provider reported", "estimated")."""
    return str(Provenance(provenance).label).lower()


class StepColumnsMixin:
    """The computed columns of a step, wherever steps are listed (inline in a run, and on their own)."""

    @admin.display(description="Context used")
    def used_tokens(self, obj: AgentStep) -> str:
        return _usage_label(obj)

    @admin.display(description="Skipped targets")
    def skipped(self, obj: AgentStep) -> str:
        return _skipped_label(obj)

    @admin.display(description="Versions used")
    def versions(self, obj: AgentStep) -> str:
        return pins_label(obj.pins)

    @admin.display(description="Kind", ordering="kind")
    def step_kind(self, obj: AgentStep) -> str:
        return obj.kind.replace("_", " ").capitalize()

    @admin.display(description="Cache")
    def cache(self, obj: AgentStep) -> str:
        """Prompt tokens read from the provider's cache, and written to it."""
        return format_html(
            "{} read<br>{} written", f"{obj.cached_tokens or 0:,}", f"{obj.cache_write_tokens or 0:,}"
        )

    @admin.display(description="Reply limit")
    def reply_limit(self, obj: AgentStep) -> str:
        if obj.max_tokens is None:
            return "—"
        return f"{obj.max_tokens:,} (clamped)" if obj.max_tokens_clamped else f"{obj.max_tokens:,}"


class AgentStepInline(StepColumnsMixin, ReadOnlyAdminMixin, admin.TabularInline):
    model = AgentStep
    extra = 0
    ordering = ("index",)
    show_change_link = True
    # Fits the run page at 1,400 px: the cache figures in one column, the reply limit with its clamp;
    # the duration is on the step's own page.
    fields = (
        "index", "step_kind", "status", "model", "used_tokens", "cache", "completion_tokens", "cost",
        "reply_limit", "skipped", "versions", "finish_reason", "error_code",
    )  # fmt: skip
    readonly_fields = fields


def run_outcome(run: AgentRun) -> str:
    status, reason = run.get_status_display(), run.get_termination_reason_display()
    return f"{status}: {reason}" if run.termination_reason and reason != status else status


def pins_label(pins: object) -> str:
    """Pinned versions as ``kind identifier @ history id``, one after another, in assembly order."""
    if not isinstance(pins, list) or not pins:
        return "—"
    return "; ".join(
        f"{pin.get('kind')} {pin.get('identifier')} @ {pin.get('history_id')}"
        for pin in pins
        if isinstance(pin, dict)
    )


def _skipped_label(step: AgentStep) -> str:
    """Each fallback not sent the step, and why, in figures (e.g. its window cannot hold the floor)."""
    return (
        "; ".join(
            f"{item.get('provider')}/{item.get('model')}: {item.get('reason')} "
            f"(needs {item.get('estimated', 0):,}, budget {item.get('budget', 0):,} of window "
            f"{item.get('window', 0):,})"
            for item in step.skipped_targets
            if isinstance(item, dict)
        )
        or "—"
    )


@admin.register(AgentRun)
class AgentRunAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    # Fits a 1,400-pixel screen beside the filters: a short run id (the full one in its tooltip and on
    # the run page), status and reason in one column, prompt and completion tokens in one.
    list_display = (
        "short_id", "configuration_name", "outcome", "step_count", "context_used", "tokens", "cost", "started",
    )  # fmt: skip
    list_filter = ("status", "termination_reason", "configuration", RunScoreFilter)
    search_fields = ("id", "configuration__identifier", "error_code")
    date_hierarchy = "created_at"
    inlines = [AgentStepInline, ToolApprovalInline]
    actions = ["cancel_runs", "make_evaluation_cases"]
    change_list_template = "admin/editors/agentrun/change_list.html"
    fieldsets = (
        (None, {"fields": ("id", "configuration", "api_client", "outcome")}),
        ("Context usage", {"fields": ("context_usage", "usage_chart")}),
        ("Request", {"fields": ("input_data_class", "request_skills", "max_tokens", "cancel_requested")}),
        ("Pinned versions", {"fields": ("versions",)}),
        (
            "Totals",
            {
                "fields": (
                    "prompt_tokens_total",
                    "cached_tokens_total",
                    "cache_write_tokens_total",
                    "completion_tokens_total",
                    "cost_total",
                    "requeue_count",
                )
            },
        ),
        (
            "Outcome",
            {
                "fields": (
                    "error_code",
                    "error_message",
                    "created_at",
                    "updated_at",
                    "finished_at",
                    "content_purged_at",
                )
            },
        ),
    )
    readonly_fields = (
        "id", "configuration", "api_client", "outcome", "context_usage", "usage_chart",
        "input_data_class", "request_skills", "max_tokens", "cancel_requested", "versions", "prompt_tokens_total",
        "cached_tokens_total", "cache_write_tokens_total", "completion_tokens_total", "cost_total", "requeue_count",
        "error_code", "error_message", "created_at", "updated_at", "finished_at", "content_purged_at",
    )  # fmt: skip

    def get_urls(self) -> list[URLPattern]:
        costs = path("costs/", self.admin_site.admin_view(self.costs), name="agents_cost_report")
        retention = path("retention/", self.admin_site.admin_view(self.retention), name="agents_retention")
        return [costs, retention, *super().get_urls()]

    def costs(self, request: HttpRequest) -> HttpResponse:
        return cost_view(self, request)

    def retention(self, request: HttpRequest) -> HttpResponse:
        return retention_view(self, request)

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentRun]:
        return (
            super()
            .get_queryset(request)
            .select_related("configuration__model", "api_client")
            .annotate(step_total=Count("steps"))
        )

    @admin.display(description="Steps", ordering="step_total")
    def step_count(self, obj: AgentRun) -> int:
        return obj.step_total  # type: ignore[attr-defined]

    @admin.display(description="Run", ordering="id")
    def short_id(self, obj: AgentRun) -> str:
        return format_html('<span title="{}">{}</span>', obj.id, str(obj.id)[:SHORT_ID])

    # Columns of their own rather than the fields: admin keeps a foreign key or a date on one line.
    @admin.display(description="Configuration", ordering="configuration__identifier")
    def configuration_name(self, obj: AgentRun) -> str:
        return obj.configuration.identifier

    @admin.display(description="Started", ordering="created_at")
    def started(self, obj: AgentRun) -> str:
        return format_html("{}<br>{} UTC", f"{obj.created_at:%Y-%m-%d}", f"{obj.created_at:%H:%M:%S}")

    @admin.display(description="Cost", ordering="cost_total")
    def cost(self, obj: AgentRun) -> str:
        """The total without the stored trailing zeros (ten decimal places), the stored value in its tooltip."""
        shown = f"{obj.cost_total.normalize():f}" if obj.cost_total else "0"
        return format_html('<span title="{}">{}</span>', obj.cost_total, shown)

    @admin.display(description="Status", ordering="status")
    def outcome(self, obj: AgentRun) -> str:
        """The status, and why the run ended where that says more: "Completed" once, not "Completed:
        Completed"; "Failed: Refused by governance"."""
        return run_outcome(obj)

    @admin.display(description="Tokens")
    def tokens(self, obj: AgentRun) -> str:
        return format_html(
            "{} in<br>{} out", f"{obj.prompt_tokens_total:,}", f"{obj.completion_tokens_total:,}"
        )

    @admin.display(description="Context used")
    def context_usage(self, obj: AgentRun) -> str:
        usage = run_usage(obj)
        used, window = usage.used_tokens, f"{usage.context_window:,}"
        if used.value is None:
            return f"unavailable (window {window}, {usage.model})"
        return f"{used.value:,} of {window} ({_provenance(used.provenance)}, {usage.model})"

    @admin.display(description="Context used")
    def context_used(self, obj: AgentRun) -> str:
        """:meth:`context_usage` on two lines, for the list."""
        usage = run_usage(obj)
        used, window = usage.used_tokens, f"{usage.context_window:,}"
        if used.value is None:
            return format_html("unavailable<br><small>window {}, {}</small>", window, usage.model)
        return format_html(
            "{} of {}<br><small>{}, {}</small>",
            f"{used.value:,}",
            window,
            _provenance(used.provenance),
            usage.model,
        )

    @admin.display(description="Versions the run started with")
    def versions(self, obj: AgentRun) -> str:
        return pins_label(obj.pins)

    @admin.display(description="Context used per step")
    def usage_chart(self, obj: AgentRun) -> str:
        steps = AgentStep.objects.filter(
            run=obj, status=StepStatus.COMPLETED, kind=StepKind.MODEL_CALL
        ).order_by("index")
        points = [
            UsagePoint(step.index, usage_from_step(step.reported_prompt_tokens, step.estimated_prompt_tokens))
            for step in steps
        ]
        if not points:
            return "No completed step yet."
        return usage_chart(points, run_usage(obj).context_window).html()

    def has_make_cases_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(CASE_PERMISSION)

    @admin.action(description="Make evaluation cases of selected runs", permissions=["make_cases"])
    def make_evaluation_cases(self, request: HttpRequest, queryset: QuerySet[AgentRun]) -> None:
        """Each run becomes a case of its configuration, with its labels and its text as sent."""
        outcome = evaluation_cases_from_runs(runs=queryset.order_by("created_at"))
        for case in outcome.made:
            self.message_user(request, f"Made the case “{case}” ({case.data_class}).", messages.SUCCESS)
        if outcome.skipped:
            self.message_user(
                request, f"Already cases: {len(outcome.skipped)} run(s) left as they were.", messages.WARNING
            )

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(CANCEL_PERMISSION)

    @admin.action(description="Cancel selected runs", permissions=["cancel"])
    def cancel_runs(self, request: HttpRequest, queryset: QuerySet[AgentRun]) -> None:
        requested = 0
        for run in queryset:
            if run.is_terminal:
                self.message_user(
                    request, f"Run {run.id} has already finished ({run.status}).", messages.WARNING
                )
                continue
            run = run_cancel(run=run)
            self.log_change(request, run, "Cancel requested.")
            requested += 1
        if requested:
            self.message_user(request, f"Cancel requested for {requested} run(s).", messages.SUCCESS)


@admin.register(AgentStep)
class AgentStepAdmin(StepColumnsMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "run",
        "index",
        "step_kind",
        "status",
        "model",
        "used_tokens",
        "duration_ms",
        "created_at",
    )
    list_filter = ("status", "kind")
    search_fields = ("run__id",)
    fields = (
        "run", "index", "kind", "status", "model", "provider", "used_tokens", "reported_prompt_tokens",
        "estimated_prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens", "cost",
        "usage_provenance", "context_window", "max_tokens", "max_tokens_clamped", "skipped", "versions",
        "breakdown_bar", "finish_reason", "calibration_ratio", "duration_ms", "error_code", "label",
        "receiver_label", "integrity", "injection_screening", "compaction", "receipt_shown", "created_at",
    )  # fmt: skip
    readonly_fields = fields

    @admin.display(description="Receipt")
    def receipt_shown(self, obj: AgentStep) -> str:
        """What the step's answer was decided on, as a table (agents/receipt_table.py)."""
        return receipt_table(obj.receipt)

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgentStep]:
        return super().get_queryset(request).select_related("run", "model")

    @admin.display(description="Injection screening")
    def injection_screening(self, obj: AgentStep) -> str:
        """The untrusted results of this step's tool calls in which screening found injection-shaped
        text, with the rules found (a signal: their level stays untrusted)."""
        flagged = RunMessage.objects.filter(run_id=obj.run_id, step_index=obj.index, role="tool")
        rows = flagged.exclude(screening="").order_by("position")
        found = [f"{call} ({tool}): {rules}" for call, tool, rules in rows.values_list(
            "tool_call_id", "tool_name", "screening"
        )]  # fmt: skip
        return "; ".join(found) or "Nothing flagged."

    @admin.display(description="Budget breakdown")
    def breakdown_bar(self, obj: AgentStep) -> str:
        if not obj.breakdown:
            return "No breakdown (the step did not reach the fit)."
        # The template escapes every value; render_to_string returns it marked safe.
        return render_to_string("admin/editors/includes/budget_bar.html", {"bar": budget_bar(obj.breakdown)})
