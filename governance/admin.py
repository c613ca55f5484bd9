"""Governance in admin: the append-only event log and the publications, read-only, and the read-only
mixin every admin of append-only records uses."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from governance.models import GovernanceEvent, Publication


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


@admin.register(Publication)
class PublicationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Every publish of a draft: who, when, which row and which history version. Read-only; an
    object's change page links here filtered to it (``governance.drafts_admin.publications_url``)."""

    list_display = (
        "published_at",
        "author_label",
        "content_type",
        "published_object",
        "version_link",
        "field_list",
    )
    list_filter = (("content_type", admin.RelatedOnlyFieldListFilter), "author_label")
    search_fields = ("object_repr", "author_label")
    date_hierarchy = "published_at"
    list_select_related = ("content_type",)

    @admin.display(description="Object", ordering="object_repr")
    def published_object(self, obj: Publication) -> str:
        url = self._admin_url(obj, "change", obj.object_id)
        return format_html('<a href="{}">{}</a>', url, obj.object_repr) if url else obj.object_repr

    @admin.display(description="Version", ordering="version")
    def version_link(self, obj: Publication) -> str:
        if obj.version is None:
            return "—"
        url = self._admin_url(obj, "simple_history", obj.object_id, obj.version)
        return format_html('<a href="{}">{}</a>', url, obj.version) if url else str(obj.version)

    @admin.display(description="Fields")
    def field_list(self, obj: Publication) -> str:
        return ", ".join(obj.fields)

    def _admin_url(self, obj: Publication, page: str, *args: object) -> str:
        """The admin page of the published row (when the row and the page exist), else ''."""
        model = obj.content_type.model_class()
        if model is None or not model._default_manager.filter(pk=obj.object_id).exists():
            return ""
        try:
            return reverse(f"admin:{obj.content_type.app_label}_{obj.content_type.model}_{page}", args=args)
        except NoReverseMatch:
            return ""
