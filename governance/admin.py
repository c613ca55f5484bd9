"""Governance in admin: the append-only event log and the publications, read-only, and the read-only
mixin every admin of append-only records uses."""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib import admin
from django.db.models import QuerySet, TextChoices
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from governance.models import GovernanceEvent, Publication
from governance.vocabulary import DataClass, SourceKind, TrustZone


class ReadOnlyAdminMixin:
    """For a model admin or an inline of append-only records: nothing is added, changed or deleted here;
    viewing needs the model's view permission."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def vocabulary_label(choices: type[TextChoices], value: str) -> str:
    """How a stored vocabulary value reads in admin: its label; an empty value is "—", and a value the
    vocabulary does not know is shown as stored (never silently relabelled)."""
    if not value:
        return "—"
    return str(choices(value).label) if value in choices.values else value


class VocabularyFilter(admin.SimpleListFilter):
    """A list filter on a plain text column holding a vocabulary value, offering the vocabulary's
    labels in its rank order (the column itself has no choices: it records what was decided)."""

    vocabulary: ClassVar[type[TextChoices]]

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(member.value, str(member.label)) for member in self.vocabulary]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(**{str(self.parameter_name): self.value()})
        return queryset


class DataClassFilter(VocabularyFilter):
    title = "data class"
    parameter_name = "data_class"
    vocabulary = DataClass


class ZoneFilter(VocabularyFilter):
    title = "zone"
    parameter_name = "zone"
    vocabulary = TrustZone


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read-only: the log is append-only, and admin never edits or deletes it. Vocabulary values read
    as their labels; :meth:`source_url` links a source to its admin page (none here: the policy core
    imports no other app, and the admin that registers the log may know the rows)."""

    list_display: tuple[str, ...] = (
        "created_at", "decision", "outcome", "source", "data_class_label", "zone_label", "configuration",
        "model", "run", "step",
    )  # fmt: skip
    list_filter = ("decision", "outcome", "configuration", "source_kind", ZoneFilter, DataClassFilter)
    search_fields = ("correlation_id", "source_identifier", "configuration", "run")
    date_hierarchy = "created_at"
    fields = (
        "created_at", "correlation_id", "decision", "outcome", "source", "data_class_label",
        "ceiling_label", "zone_label", "reason", "provider", "model", "configuration", "api_client", "run",
        "step", "chain", "seq", "prev_hash", "hash",
    )  # fmt: skip
    readonly_fields = fields

    def history_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> HttpResponse:
        """An event has no history: it is written once and never changed."""
        raise Http404("A governance event is never changed: it has no history.")

    @admin.display(description="Source", ordering="source_identifier")
    def source(self, obj: GovernanceEvent) -> str:
        if not obj.source_kind and not obj.source_identifier:
            return "—"
        kind = vocabulary_label(SourceKind, obj.source_kind)
        url = self.source_url(obj)
        if url:
            return format_html('{} <a href="{}">{}</a>', kind, url, obj.source_identifier)
        return f"{kind} {obj.source_identifier}".strip()

    def source_url(self, obj: GovernanceEvent) -> str:
        """The admin page of the row the event names as its source, or '' when there is none."""
        return ""

    @admin.display(description="Data class", ordering="data_class")
    def data_class_label(self, obj: GovernanceEvent) -> str:
        return vocabulary_label(DataClass, obj.data_class)

    @admin.display(description="Ceiling", ordering="ceiling")
    def ceiling_label(self, obj: GovernanceEvent) -> str:
        return vocabulary_label(TrustZone, obj.ceiling)

    @admin.display(description="Zone", ordering="zone")
    def zone_label(self, obj: GovernanceEvent) -> str:
        return vocabulary_label(TrustZone, obj.zone)


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
