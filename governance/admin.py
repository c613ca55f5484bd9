"""Governance in admin: the append-only event log (read-only) and the readiness report page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

from governance.models import GovernanceEvent
from governance.views import readiness_promote_view, readiness_view


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(admin.ModelAdmin):
    """Read-only: the log is append-only, and admin never edits or deletes it."""

    list_display = (
        "created_at",
        "decision",
        "outcome",
        "source_kind",
        "source_identifier",
        "data_class",
        "zone",
        "configuration",
        "model",
        "run",
        "step",
    )
    list_filter = ("decision", "outcome", "configuration", "source_kind", "zone", "data_class")
    search_fields = ("correlation_id", "source_identifier", "configuration", "run")
    date_hierarchy = "created_at"

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        # Under the event log's prefix: /admin/governance/governanceevent/readiness/.
        return [
            path("readiness/", wrap(self.readiness), name="governance_readiness"),
            path("readiness/promote/", wrap(self.readiness_promote), name="governance_readiness_promote"),
            *super().get_urls(),
        ]

    def readiness(self, request: HttpRequest) -> HttpResponse:
        return readiness_view(self, request)

    def readiness_promote(self, request: HttpRequest) -> HttpResponse:
        return readiness_promote_view(self, request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
