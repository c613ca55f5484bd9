"""Evaluation sets and evaluations in admin (docs/decisions/0025-evaluating-drafts.md).

Editors keep each configuration's cases (:class:`EvaluationCaseAdmin`), start an evaluation from the
configuration's page or a draft's publish page (:func:`evaluate_view`, through
:func:`agents.services.evaluation_start`), and read it on its page, which refreshes itself while the
evaluation runs: per case, live beside live + drafts. Before a draft is published, the publish page
lists the latest evaluation of that draft for every configuration it changes, and a configuration that
requires a passing one, or one without regressions, blocks the publish without it
(:func:`evaluation_publish_checks`). Two published versions of a configuration can be evaluated side
by side too (:mod:`evaluations.versions`), with the differences per case and in total
(:mod:`evaluations.comparison`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from catalog.models import Configuration, LlmModel
from config.errors import ApplicationError
from evaluations.comparison import Comparison, compared
from evaluations.models import Evaluation, EvaluationCase, EvaluationResult
from evaluations.services import evaluation_start
from evaluations.versions import published_versions
from governance.actors import request_actor
from governance.drafts import PublishCheck, draft_digest, draft_kind, publish_checker_register
from governance.models import Draft
from snippets.models import Snippet, normalise_tag

RUN_PERMISSION = "evaluations.run_evaluation"
REFRESH_SECONDS = 2


@admin.register(EvaluationCase)
class EvaluationCaseAdmin(admin.ModelAdmin):
    fields = (
        "configuration",
        "name",
        "position",
        "input",
        "caller_context",
        "data_class",
        "must_contain",
        "must_not_contain",
        "max_tokens",
        "must_be_permitted",
        "must_match",
        "must_be_valid_json",
        "must_call_tool",
        "tool_arguments_match",
        "judge",
        "judge_rubric",
        "judge_min_score",
        "source",
    )
    readonly_fields = ("source",)
    list_display = ("name", "configuration", "data_class", "expectations", "position")
    list_filter = ("configuration", "data_class")
    search_fields = ("name", "configuration__identifier")
    list_select_related = ("configuration", "judge")

    @admin.display(description="Expectations")
    def expectations(self, obj: EvaluationCase) -> str:
        listed = [
            f"contains “{obj.must_contain}”" if obj.must_contain else "",
            f"not “{obj.must_not_contain}”" if obj.must_not_contain else "",
            f"≤ {obj.max_tokens:,} tokens" if obj.max_tokens is not None else "",
            "permitted" if obj.must_be_permitted else "",
            f"matches /{obj.must_match}/" if obj.must_match else "",
            "valid JSON" if obj.must_be_valid_json is not None else "",
            f"calls {obj.must_call_tool}" if obj.must_call_tool else "",
            f"judged by {obj.judge.identifier}" if obj.judge is not None else "",
        ]
        return ", ".join(item for item in listed if item) or "—"


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    """Read-only: an evaluation is written by its task. Its page is the side-by-side results."""

    fields = ("configuration", "model", "status", "started_by", "done", "total", "passed", "created_at")
    list_display = ("__str__", "configuration", "model", "status", "progress", "passed", "created_at")
    list_filter = ("status", "configuration")
    list_select_related = ("configuration", "model")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Progress")
    def progress(self, obj: Evaluation) -> str:
        return f"{obj.done} of {obj.total} sends"

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        evaluation = (
            Evaluation.objects.select_related("configuration", "model__provider")
            .filter(pk=int(object_id) if object_id.isdigit() else 0)
            .first()
        )
        if evaluation is None:
            raise Http404("No such evaluation.")
        rows = evaluation_rows(evaluation)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Evaluation {evaluation.pk} of {evaluation.configuration.identifier}",
            "opts": self.model._meta,
            "original": evaluation,
            "evaluation": evaluation,
            "rows": rows,
            "side_labels": [side.label for side in evaluation.sides],
            "comparison": evaluation_comparison(rows),
            "drafts_applied": drafts_applied(evaluation),
            "refresh": None if evaluation.finished else REFRESH_SECONDS,
            "evaluate_url": evaluate_url(evaluation.configuration),
        }
        return TemplateResponse(request, "admin/evaluations/evaluation/results.html", context)


# The breakdown's lines that are context, in wire order (editors/admin/draft_compare.py labels them alike).
PARTS = (
    ("system_prompt", "System prompt"),
    ("snippets", "Snippets"),
    ("skills", "Skills"),
    ("caller_context", "Caller context"),
    ("tool_specs", "Tools"),
    ("transcript", "Task input"),
    ("tail_note", "Tail note"),
)


def result_parts(result: EvaluationResult) -> list[tuple[str, int]]:
    """The tokens of each part of what was sent (parts of none left out), then the total."""
    breakdown = result.breakdown or {}
    parts = [(label, int(breakdown.get(key, 0))) for key, label in PARTS if breakdown.get(key)]
    if breakdown:
        parts.append(("Total", int(breakdown.get("estimated", 0))))
    return parts


def evaluation_rows(evaluation: Evaluation) -> list[dict[str, Any]]:
    """Per case, in order: its name, its result on the reference side (live or the baseline version)
    and on the compared side (live + drafts or the candidate version); None: not sent yet."""
    reference_side, _ = evaluation.sides
    rows: dict[int, dict[str, Any]] = {}
    for result in evaluation.results.order_by("position", "side"):
        row = rows.setdefault(
            result.position,
            {
                "name": result.case_name,
                "input": result.case_input,
                "data_class": result.case_data_class,
                "reference": None,
                "compared": None,
            },
        )
        key = "reference" if result.side == reference_side else "compared"
        window = int((result.breakdown or {}).get("window", 0))
        row[key] = {"result": result, "parts": result_parts(result), "window": f"{window:,}"}
    return [rows[position] for position in sorted(rows)]


def evaluation_comparison(rows: list[dict[str, Any]]) -> Comparison:
    """The two sides of :func:`evaluation_rows` compared over the cases sent on both
    (evaluations/comparison.py)."""
    pairs = [
        (row["reference"]["result"], row["compared"]["result"])
        for row in rows
        if row["reference"] is not None and row["compared"] is not None
    ]
    return compared(pairs)


def drafts_applied(evaluation: Evaluation) -> list[str]:
    """Each draft the drafted side applied, as "snippet tone" reads."""
    return [f"{str(item['kind']).rpartition('.')[2]} {item['identifier']}" for item in evaluation.drafts]


def evaluate_url(configuration: Configuration) -> str:
    return reverse("admin:catalog_configuration_evaluate", args=[configuration.pk])


class EvaluateForm(forms.Form):
    """A model, and optionally two published versions to compare instead of live and live + drafts."""

    model = forms.ModelChoiceField(
        queryset=LlmModel.objects.filter(is_active=True, provider__is_active=True).select_related("provider"),
        help_text="The configuration's own model by default; its fallbacks stay part of every send.",
    )
    baseline = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label="Baseline version",
        help_text="To compare two published versions: the one to compare against.",
    )
    candidate = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label="Candidate version",
        help_text="…and the one compared with it. Leave both empty to compare live with live + drafts.",
    )

    def __init__(self, *args: Any, configuration: Configuration, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "—"), *((v.history_id, v.label) for v in published_versions(configuration))]
        for name in ("baseline", "candidate"):
            self.fields[name].choices = choices  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        chosen = [cleaned.get("baseline"), cleaned.get("candidate")]
        if chosen.count(None) == 1:
            raise forms.ValidationError("Choose both versions to compare, or neither.")
        if chosen[0] is not None and chosen[0] == chosen[1]:
            raise forms.ValidationError("Choose two different versions.")
        return cleaned

    def versions(self) -> tuple[int, int] | None:
        baseline, candidate = self.cleaned_data.get("baseline"), self.cleaned_data.get("candidate")
        return None if baseline is None or candidate is None else (baseline, candidate)


def evaluate_view(model_admin: ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """GET: the cases and a model to choose. POST: start the evaluation and show its page."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    if not request.user.has_perm(RUN_PERMISSION):
        raise PermissionDenied
    configuration = (
        Configuration.objects.select_related("model__provider")
        .filter(pk=int(object_id) if object_id.isdigit() else 0)
        .first()
    )
    if configuration is None:
        raise Http404("No such configuration.")
    form = EvaluateForm(
        request.POST or None, configuration=configuration, initial={"model": configuration.model_id}
    )
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            evaluation = evaluation_start(
                configuration=configuration,
                model=form.cleaned_data["model"],
                actor=request_actor(request),
                versions=form.versions(),
            )
        except ApplicationError as exc:
            error = exc.message
        else:
            model_admin.message_user(request, f"Started {evaluation}.", messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:evaluations_evaluation_change", args=[evaluation.pk]))
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Evaluate {configuration.identifier}",
        "opts": model_admin.model._meta,
        "original": configuration,
        "form": form,
        "error": error,
        "cases": list(configuration.evaluation_cases.all()),
        "latest": configuration.evaluations.first(),
    }
    return TemplateResponse(request, "admin/evaluations/evaluation/start.html", context)


# --- the check before a publish ----------------------------------------------------------------------------


def changed_configurations(row: models.Model, draft: Draft) -> list[Configuration]:
    """The configurations whose sends ``draft`` of ``row`` changes: a configuration's own draft, or a
    snippet's for every configuration whose tags select it, live or drafted."""
    if isinstance(row, Configuration):
        return [row]
    if not isinstance(row, Snippet):
        return []
    tags = {tag.name for tag in row.tags.all()}
    typed = str(draft.values.get("tag_names", "")).split(",")
    tags |= {normalise_tag(tag) for tag in typed if normalise_tag(tag)}
    return [
        configuration
        for configuration in Configuration.objects.order_by("identifier")
        if tags & set(configuration.snippet_tags)
    ]


def evaluation_publish_checks(row: models.Model, draft: Draft) -> list[PublishCheck]:
    """For each configuration ``draft`` changes: its latest evaluation of this very draft (the same
    values), blocking when the configuration requires a passing one and it is missing, unfinished or
    did not pass."""
    kind, object_id, digest = draft_kind(row), str(row.pk), draft_digest(draft)
    checks = []
    for configuration in changed_configurations(row, draft):
        required = configuration.require_passing_evaluation
        no_regression = configuration.require_no_regression
        latest = next(
            (e for e in configuration.evaluations.all() if e.applied(kind, object_id, digest)), None
        )
        if latest is None:
            label, held, steady = f"{configuration}: no evaluation of this draft yet.", False, False
            url, link = evaluate_url(configuration), "Evaluate"
        else:
            url, link = reverse("admin:evaluations_evaluation_change", args=[latest.pk]), "Open"
            state = "passed" if latest.passed else ("is running" if not latest.finished else "did not pass")
            label, held = f"{configuration}: {latest} of this draft {state}", bool(latest.passed)
            steady = latest.finished and latest.regressions == 0
            if no_regression and latest.regressions is not None:
                label += f", {_regressions(latest.regressions)}"
            label += "."
        if required and not held:
            label += " This configuration requires a passing evaluation before publishing."
        if no_regression and not steady:
            label += " This configuration requires an evaluation without regressions before publishing."
        blocking = (required and not held) or (no_regression and not steady)
        checks.append(PublishCheck(label=label, url=url, link_text=link, blocking=blocking))
    return checks


def _regressions(count: int) -> str:
    if count == 0:
        return "no regression"
    return f"{count} regression{'s' if count != 1 else ''} (cases that held live and not with the drafts)"


publish_checker_register(evaluation_publish_checks)
