"""The readiness report as an admin page, with a one-click promotion for rows that are safe to enforce.

The page sits under the governance event log's admin URLs (``/admin/governance/governanceevent/
readiness/``): this module's subclass of the event log's admin adds the page (editors/admin/events.py
registers it), so the governance app itself knows nothing of configurations, snippets or skills. It reads the report
from :func:`catalog.readiness.readiness_report` and promotes with
:func:`governance.services.enforcement_promote`, the one promotion every admin uses. A source is
promotable only when no configuration that sends it would refuse it under enforcement; the promote
view recomputes the report before acting, so a stale page cannot promote a refused row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from catalog.models import Configuration
from catalog.readiness import ReadinessRow, readiness_report
from catalog.selectors import configuration_list
from governance.actors import request_actor
from governance.admin import GovernanceEventAdmin
from governance.classified import ClassifiedBase
from governance.classified_admin import promotion_report
from governance.policy import enforcement_mode
from governance.services import enforcement_promote
from governance.vocabulary import Outcome, SourceKind
from skills.models import Skill
from snippets.models import Snippet

READINESS_PERMISSION = "governance.view_readiness_report"


@dataclass(frozen=True)
class Promoter:
    """How one kind of source is found by its report identifier, and who may promote it."""

    permission: str
    find: Callable[[str], ClassifiedBase | None]


def _skill_by_identifier(identifier: str) -> Skill | None:
    source_id, _, skill_path = identifier.partition(":")
    if not source_id.isdigit():
        return None
    return Skill.objects.filter(source_id=int(source_id), path=skill_path).first()


PROMOTERS: dict[str, Promoter] = {
    SourceKind.SYSTEM_PROMPT.value: Promoter(
        "catalog.change_configuration",
        lambda identifier: Configuration.objects.filter(identifier=identifier).first(),
    ),
    SourceKind.SNIPPET.value: Promoter(
        "snippets.change_snippet",
        lambda identifier: Snippet.objects.filter(identifier=identifier).first(),
    ),
    SourceKind.SKILL.value: Promoter("skills.change_skill", _skill_by_identifier),
}


@dataclass(frozen=True)
class ShownRow:
    row: ReadinessRow
    promotable: bool  # no configuration would refuse this source, and the user may change it
    blocked_by: tuple[str, ...]  # configurations that would refuse the source


def _refusing(rows: tuple[ReadinessRow, ...]) -> dict[tuple[str, str], tuple[str, ...]]:
    refusing: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row.would_be == Outcome.REFUSED:
            refusing.setdefault((row.kind, row.identifier), []).append(row.configuration)
    return {key: tuple(value) for key, value in refusing.items()}


def shown_rows(rows: tuple[ReadinessRow, ...], request: HttpRequest) -> list[ShownRow]:
    refusing = _refusing(rows)
    shown = []
    for row in rows:
        promoter = PROMOTERS.get(row.kind)
        blocked_by = refusing.get((row.kind, row.identifier), ())
        allowed = promoter is not None and request.user.has_perm(promoter.permission)
        shown.append(ShownRow(row=row, promotable=allowed and not blocked_by, blocked_by=blocked_by))
    return shown


def readiness_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(READINESS_PERMISSION):
        raise PermissionDenied
    report = readiness_report(configurations=configuration_list())
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Governance readiness",
        "opts": model_admin.model._meta,
        "rows": shown_rows(report.rows, request),
        "summary": report.summary,
        "personal_data": report.personal_data,
        "mode": enforcement_mode().value,
    }
    return TemplateResponse(request, "admin/editors/readiness/report.html", context)


def readiness_promote_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    """Promote one source (``kind`` + ``identifier`` from the form) after re-checking the report."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    back = HttpResponseRedirect(reverse("admin:governance_readiness"))
    kind, identifier = request.POST.get("kind", ""), request.POST.get("identifier", "")
    promoter = PROMOTERS.get(kind)
    if not request.user.has_perm(READINESS_PERMISSION) or promoter is None:
        raise PermissionDenied
    if not request.user.has_perm(promoter.permission):
        raise PermissionDenied
    rows = [
        row
        for row in readiness_report(configurations=configuration_list()).rows
        if (row.kind, row.identifier) == (kind, identifier)
    ]
    obj = promoter.find(identifier)
    if not rows or obj is None:
        model_admin.message_user(
            request, f"{identifier} is not an observed source any more.", messages.WARNING
        )
        return back
    refusing = sorted(row.configuration for row in rows if row.would_be == Outcome.REFUSED)
    if refusing:
        message = f"Not promoted {identifier}: enforcement would refuse it for {', '.join(refusing)}."
        model_admin.message_user(request, message, messages.ERROR)
        return back
    result = enforcement_promote(rows=[obj], actor=request_actor(request))
    promotion_report(
        model_admin,
        request,
        result=result,
        rows=[obj],
        log_message="Promoted to enforce from the readiness report.",
    )
    return back


class GovernanceEventWithReadinessAdmin(GovernanceEventAdmin):
    """The event log's admin with the readiness page and its promote action under its URL prefix."""

    change_list_template = "admin/editors/readiness/event_change_list.html"

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("readiness/", wrap(self.readiness), name="governance_readiness"),
            path("readiness/promote/", wrap(self.readiness_promote), name="governance_readiness_promote"),
            *super().get_urls(),
        ]

    def readiness(self, request: HttpRequest) -> HttpResponse:
        return readiness_view(self, request)

    def readiness_promote(self, request: HttpRequest) -> HttpResponse:
        return readiness_promote_view(self, request)
