from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from simple_history.admin import SimpleHistoryAdmin

from config.admin_history import VersionDiffMixin
from context_assembly.badges import token_badge
from governance.actors import request_actor
from governance.classified_admin import ClassifiedAdmin
from governance.drafts_admin import DraftAdmin, HasDraftFilter, form_field_initial
from snippets.models import Snippet, Tag, normalise_tag
from snippets.services import snippet_save

PUBLISH_PERMISSION = "snippets.publish_snippet"


class SnippetForm(forms.ModelForm):
    tag_names = forms.CharField(
        required=False,
        label="Tags",
        help_text="Comma-separated. Tags are lower-cased and matched exactly; new tags are created.",
    )

    class Meta:
        model = Snippet
        fields = (
            "identifier",
            "name",
            "description",
            "text",
            "is_active",
            "sorting",
            "data_class",
            "ceiling",
            "enforcement",
            "metadata",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tag_names"].initial = form_field_initial(self, "tag_names", self._live_tags, None)

    def _live_tags(self) -> str:
        return ", ".join(t.name for t in self.instance.tags.all())


@admin.register(Snippet)
class SnippetAdmin(VersionDiffMixin, DraftAdmin, ClassifiedAdmin, SimpleHistoryAdmin):
    """A change is saved as a draft; Publish makes it live (``governance.drafts_admin``)."""

    form = SnippetForm
    publish_permission = PUBLISH_PERMISSION
    diff_field = "text"
    history_list_display = ["diff"]
    # Fits a 1,400-pixel screen beside the filters: the classification in one column, short headers,
    # the token badge as a figure and a share (its full text in the tooltip and on the change page).
    list_display = (
        "identifier", "name", "tag_list", "classification", "active", "injection", "token_share", "has_draft",
    )  # fmt: skip
    list_filter = (
        "tags", "data_class", "ceiling", "enforcement", "is_active", "injection_severity", HasDraftFilter,
    )  # fmt: skip
    search_fields = ("identifier", "name", "description", "text")
    readonly_fields = ("tokens", "injection_severity", "injection_findings", "updated_at")

    # The change form (admin/snippets/snippet/change_form.html) names the live badge endpoint; the
    # script updates the "Tokens" field while an editor types.
    class Media:
        js = ("context_assembly/live_token_badge.js",)

    actions = ["promote_to_enforce"]
    fieldsets = (
        (
            None,
            {"fields": ("identifier", "name", "description", "text", "tag_names", "is_active", "sorting")},
        ),
        ("Governance", {"fields": ("data_class", "ceiling", "enforcement")}),
        ("Review", {"fields": ("tokens", "injection_severity", "injection_findings", "updated_at")}),
        ("Advanced", {"fields": ("metadata",), "classes": ("collapse",)}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Snippet]:
        return super().get_queryset(request).prefetch_related("tags")

    @admin.display(description="Tags")
    def tag_list(self, obj: Snippet) -> str:
        return ", ".join(tag.name for tag in obj.tags.all())

    @admin.display(description="Tokens")
    def tokens(self, obj: Snippet) -> str:
        badge = token_badge(obj.text) if obj.text else None
        return badge.label if badge else "—"

    @admin.display(description="Tokens")
    def token_share(self, obj: Snippet) -> str:
        badge = token_badge(obj.text) if obj.text else None
        if badge is None:
            return "—"
        share = f"{100 * badge.tokens / badge.context_window:.2f}%"
        return format_html(
            '<span title="{}">{}<br><small>{}</small></span>', badge.label, f"{badge.tokens:,}", share
        )

    @admin.display(description="Classification", ordering="data_class")
    def classification(self, obj: Snippet) -> str:
        return format_html(
            "{}<br>ceiling {}<br>{}",
            obj.get_data_class_display(),
            obj.get_ceiling_display(),
            obj.get_enforcement_display(),
        )

    @admin.display(description="Active", boolean=True, ordering="is_active")
    def active(self, obj: Snippet) -> bool:
        return obj.is_active

    @admin.display(description="Injection", ordering="injection_severity")
    def injection(self, obj: Snippet) -> str:
        return obj.injection_severity or "—"

    def live_save(
        self, request: HttpRequest, obj: Snippet, *, values: dict[str, Any] | None, reason: str
    ) -> None:
        tag_names = _tag_names(values["tag_names"]) if values and "tag_names" in values else None
        snippet_save(snippet=obj, tag_names=tag_names, actor=request_actor(request), reason=reason)

    def field_text(self, obj: Snippet, name: str, values: dict[str, Any] | None) -> str:
        if name != "tag_names":
            return super().field_text(obj, name, values)
        if values is None:
            return ", ".join(tag.name for tag in obj.tags.all())
        return ", ".join(
            dict.fromkeys(normalise_tag(n) for n in _tag_names(values[name]) if normalise_tag(n))
        )


def _tag_names(raw: str) -> list[str]:
    return [name for name in raw.split(",") if name.strip()]


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    """Configurations select snippets by tag name: renaming or deleting a tag changes what every
    configuration selecting it sends, at once and with no draft. Both need the permission to publish
    snippets; anyone who may add tags may create one (a new tag is carried by no snippet yet)."""

    list_display = ("name",)
    search_fields = ("name",)

    def has_change_permission(self, request: HttpRequest, obj: Tag | None = None) -> bool:
        return super().has_change_permission(request, obj) and request.user.has_perm(PUBLISH_PERMISSION)

    def has_delete_permission(self, request: HttpRequest, obj: Tag | None = None) -> bool:
        return super().has_delete_permission(request, obj) and request.user.has_perm(PUBLISH_PERMISSION)
