"""Governance in admin: the append-only event log, read-only, and the read-only admin other append-only
records use."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from governance.models import GovernanceEvent


class ReadOnlyAdmin(admin.ModelAdmin):
    """The admin of an append-only record: listed and read, never added, changed or deleted."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(ReadOnlyAdmin):
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
