"""Governance in admin: the append-only event log, read-only, and the read-only mixin every admin of
append-only records uses."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from governance.models import GovernanceEvent


class ReadOnlyAdminMixin:
    """For a model admin or an inline of append-only records: nothing is added, changed or deleted here;
    viewing needs the model's view permission."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
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
