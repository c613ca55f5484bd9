"""Scores in admin: read-only (clients post them, gateway/apis/scores.py), listed with their answer,
configuration, published version and label; above the list, per configuration, the scores over time
(one line per published version) and a summary per version. Runs can be filtered by their scores."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.safestring import SafeString

from agents.models import AgentRun
from editors.admin.score_chart import score_chart, version_summaries
from gateway.models import Score, ScoreKind
from governance.admin import ReadOnlyAdminMixin

CHARTED_CONFIGURATIONS = 6  # charts above the list; filter by configuration to see another


@admin.register(Score)
class ScoreAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "name",
        "value",
        "configuration",
        "version",
        "answer",
        "label",
        "api_client",
        "created_at",
    )
    list_filter = ("configuration", "name", "kind", "label")
    search_fields = ("configuration__identifier", "completion__request_id", "comment")
    list_select_related = ("configuration", "api_client", "completion")
    change_list_template = "admin/editors/score/change_list.html"
    fields = (
        "api_client", "completion", "run", "configuration", "configuration_version", "label", "name", "kind",
        "numeric_value", "boolean_value", "category_value", "comment", "created_at",
    )  # fmt: skip
    readonly_fields = fields

    @admin.display(description="Value")
    def value(self, obj: Score) -> str:
        return obj.value_label

    @admin.display(description="Version", ordering="configuration_version")
    def version(self, obj: Score) -> str:
        return str(obj.configuration_version) if obj.configuration_version is not None else "—"

    @admin.display(description="Answer")
    def answer(self, obj: Score) -> str:
        return obj.answer_id

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        if isinstance(response, TemplateResponse) and response.context_data is not None:
            changelist = response.context_data.get("cl")
            if changelist is not None:
                response.context_data["score_panels"] = score_panels(changelist.queryset)
        return response


def score_panels(scores: QuerySet[Score]) -> list[dict[str, Any]]:
    """Per configuration in ``scores`` (the most scored first), per score name: the chart over time
    and the summary per published version."""
    rows = list(scores.select_related("configuration", "completion").order_by("created_at", "pk"))
    grouped: dict[tuple[str, str], list[Score]] = {}
    for score in rows:
        grouped.setdefault((score.configuration.identifier, score.name), []).append(score)
    ranked = sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))[:CHARTED_CONFIGURATIONS]
    panels = []
    for (identifier, name), group in ranked:
        chart = score_chart(group, title=f"{identifier}, {name}")
        panels.append(
            {
                "configuration": identifier,
                "name": name,
                "chart": chart.html() if chart is not None else SafeString(""),
                "versions": version_summaries(group),
            }
        )
    return panels


class RunScoreFilter(admin.SimpleListFilter):
    """Runs by the scores their clients gave them."""

    title = "score"
    parameter_name = "score"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        choices = [("any", "Scored"), ("none", "Not scored"), ("yes", "Scored yes"), ("no", "Scored no")]
        numbers = (
            Score.objects.filter(run__isnull=False, kind=ScoreKind.NUMERIC)
            .values_list("numeric_value", flat=True)
            .distinct()
            .order_by("numeric_value")
        )
        thresholds = list(numbers)[1:6]  # "below" the lowest would match nothing
        choices += [(f"below:{value:g}", f"A number below {value:g}") for value in thresholds]
        categories = (
            Score.objects.filter(run__isnull=False, kind=ScoreKind.CATEGORY)
            .values_list("category_value", flat=True)
            .distinct()
            .order_by("category_value")[:10]
        )
        choices += [(f"category:{value}", f"“{value}”") for value in categories]
        return choices

    def queryset(self, request: HttpRequest, queryset: QuerySet[AgentRun]) -> QuerySet[AgentRun]:
        chosen = self.value()
        if not chosen:
            return queryset
        if chosen == "none":
            return queryset.filter(scores__isnull=True)
        scored = Score.objects.filter(run__isnull=False)
        if chosen == "any":
            pass
        elif chosen in ("yes", "no"):
            scored = scored.filter(kind=ScoreKind.BOOLEAN, boolean_value=chosen == "yes")
        elif chosen.startswith("below:"):
            try:
                threshold = float(chosen.partition(":")[2])
            except ValueError:
                return queryset.none()
            scored = scored.filter(kind=ScoreKind.NUMERIC, numeric_value__lt=threshold)
        elif chosen.startswith("category:"):
            scored = scored.filter(kind=ScoreKind.CATEGORY, category_value=chosen.partition(":")[2])
        else:
            return queryset.none()
        return queryset.filter(pk__in=scored.values("run_id"))
