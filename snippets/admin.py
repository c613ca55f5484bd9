from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from config.admin_history import VersionDiffMixin
from context_assembly.badges import token_badge
from governance.actors import request_actor
from governance.classified_admin import ClassifiedAdmin
from snippets.models import Snippet, Tag
from snippets.services import snippet_save


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
        if self.instance.pk:
            self.fields["tag_names"].initial = ", ".join(t.name for t in self.instance.tags.all())

    def tag_list(self) -> list[str]:
        return [name for name in self.cleaned_data.get("tag_names", "").split(",") if name.strip()]


@admin.register(Snippet)
class SnippetAdmin(VersionDiffMixin, ClassifiedAdmin, SimpleHistoryAdmin):
    form = SnippetForm
    diff_field = "text"
    history_list_display = ["diff"]
    list_display = (
        "identifier",
        "name",
        "tag_list",
        "data_class",
        "ceiling",
        "enforcement",
        "is_active",
        "injection_severity",
        "tokens",
    )
    list_filter = ("tags", "data_class", "ceiling", "enforcement", "is_active", "injection_severity")
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

    def save_model(self, request: HttpRequest, obj: Snippet, form: SnippetForm, change: bool) -> None:
        snippet_save(
            snippet=obj,
            tag_names=form.tag_list(),
            actor=request_actor(request),
            reason="edited in admin" if change else "created in admin",
        )


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ("name",)
    search_fields = ("name",)
