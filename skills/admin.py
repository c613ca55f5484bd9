from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from config.admin_history import VersionDiffMixin
from config.errors import ApplicationError
from context_assembly.badges import token_badge
from governance.actors import request_actor
from governance.admin import ReadOnlyAdminMixin
from governance.classified_admin import ClassifiedAdmin
from skills.composition import skill_section
from skills.models import Skill, SkillAudit, SkillSource
from skills.review_page import review_decide_view, review_queue_view
from skills.services import (
    skill_classify,
    skill_disable,
    skill_enable,
    skill_source_check_fetchable,
    skill_source_request_sync,
)

_SYNC_MANAGED = (
    "source", "path", "name", "description", "license", "compatibility", "metadata", "allowed_tools",
    "declares_allowed_tools", "unknown_keys", "parse_warnings", "checksum", "source_sha", "trust_level",
    "is_enabled", "is_orphaned", "injection_severity", "findings_acknowledged", "updated_at",
)  # fmt: skip
_FRONT_MATTER = (
    "license", "compatibility", "metadata", "allowed_tools", "declares_allowed_tools", "unknown_keys",
    "parse_warnings",
)  # fmt: skip


class SkillSourceForm(forms.ModelForm):
    """A GitHub source whose URL a sync could never fetch is refused when it is saved, as the API's
    creation refuses it, not first at its sync. The admin builds its form from this one with the
    model and fields it shows."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        probe = SkillSource(kind=cleaned.get("kind", ""), url=cleaned.get("url", ""))
        try:
            skill_source_check_fetchable(probe)
        except ApplicationError as refused:
            # A form-wide error: one on the URL field would take the URL out of what the model's own
            # checks read, which would then also call it missing.
            raise forms.ValidationError(refused.message) from refused
        return cleaned


@admin.register(SkillSource)
class SkillSourceAdmin(admin.ModelAdmin):
    form = SkillSourceForm
    list_display = (
        "name", "kind", "trust_level", "default_data_class", "default_ceiling", "sync_status",
        "last_synced_at", "last_error_short", "skill_count",
    )  # fmt: skip
    list_filter = ("kind", "trust_level", "sync_status")
    search_fields = ("name", "url", "path")
    readonly_fields = (
        "pinned_sha", "sync_status", "sync_started_at", "last_synced_at", "last_error", "last_fingerprint",
        "last_counts",
    )  # fmt: skip
    actions = ["sync_sources"]

    @admin.display(description="Last error")
    def last_error_short(self, obj: SkillSource) -> str:
        return obj.last_error[:120]

    def get_queryset(self, request: HttpRequest) -> QuerySet[SkillSource]:
        return super().get_queryset(request).annotate(skill_total=Count("skills"))

    @admin.display(description="Skills", ordering="skill_total")
    def skill_count(self, obj: SkillSource) -> int:
        return obj.skill_total  # type: ignore[attr-defined]

    @admin.action(description="Sync selected sources")
    def sync_sources(self, request: HttpRequest, queryset: QuerySet[SkillSource]) -> None:
        for source in queryset:
            skill_source_request_sync(source_id=source.pk)
        self.message_user(
            request,
            f"Sync requested for {queryset.count()} source(s); the status column shows the outcome.",
            messages.SUCCESS,
        )


def _each_skill(description: str, verb: str, change: Callable[..., object], **options: Any) -> Any:
    """An admin action calling the service ``change`` on each selected skill as the requesting user; a
    skill the service refuses is reported by name and the others still change."""

    @admin.action(description=description)
    def action(model_admin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Skill]) -> None:
        done = 0
        for skill in queryset:
            try:
                change(skill=skill, actor=request_actor(request), **options)
                done += 1
            except ApplicationError as exc:
                warning = f"Not {verb} {skill.identifier}: {exc.message}"
                model_admin.message_user(request, warning, messages.WARNING)
        if done:
            model_admin.message_user(request, f"{verb.capitalize()} {done} skill(s).", messages.SUCCESS)

    return action


@admin.register(Skill)
class SkillAdmin(VersionDiffMixin, ClassifiedAdmin, SimpleHistoryAdmin):
    diff_field = "body"
    history_list_display = ["diff"]
    list_display = (
        "name", "source", "path", "is_enabled", "is_orphaned", "trust_level", "data_class", "ceiling",
        "enforcement", "injection_severity", "tokens",
    )  # fmt: skip
    list_filter = (
        "is_enabled",
        "is_orphaned",
        "trust_level",
        "injection_severity",
        "data_class",
        "enforcement",
    )
    search_fields = ("name", "description", "path")
    readonly_fields = (*_SYNC_MANAGED, "tokens", "findings", "preview")
    actions = ["enable_skills", "acknowledge_and_enable", "disable_skills", "promote_to_enforce"]
    fieldsets = (
        (None, {"fields": ("name", "description", "source", "path", "is_enabled", "is_orphaned")}),
        ("Governance", {"fields": ("data_class", "ceiling", "enforcement", "trust_level")}),
        (
            "Review",
            {"fields": ("tokens", "injection_severity", "findings", "findings_acknowledged", "preview")},
        ),
        ("Provenance", {"fields": ("checksum", "source_sha", "updated_at")}),
        (
            "Front matter",
            {
                "fields": _FRONT_MATTER,
                "classes": ("collapse",),
            },
        ),
    )

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("review/", wrap(self.review_queue), name="skills_skill_review"),
            path(
                "review/<int:skill_id>/<str:decision>/",
                wrap(self.review_decide),
                name="skills_skill_review_decide",
            ),
            *super().get_urls(),
        ]

    def review_queue(self, request: HttpRequest) -> HttpResponse:
        return review_queue_view(self, request)

    def review_decide(self, request: HttpRequest, skill_id: int, decision: str) -> HttpResponse:
        if decision not in ("acknowledge", "disable"):
            raise PermissionDenied
        return review_decide_view(self, request, skill_id, decision)

    def revert_disabled(self, request: HttpRequest, obj: Any = None) -> bool:
        # A version's body, checksum, state and provenance belong together and to the sync: restoring
        # an old version would pair an old body with today's checksum check, or re-enable a skill the
        # sync disabled. Versions are for reading; the classification is edited on the change page.
        return True

    def history_form_view(
        self, request: HttpRequest, object_id: str, version_id: str, extra_context: Any = None
    ) -> HttpResponse:
        if request.method == "POST":
            raise PermissionDenied  # revert is disabled for skills (see revert_disabled)
        return super().history_form_view(request, object_id, version_id, extra_context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # skills come from a source's sync

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # disable instead: skills are never deleted, their audit refers to them

    def get_queryset(self, request: HttpRequest) -> QuerySet[Skill]:
        return super().get_queryset(request).select_related("source")

    @admin.display(description="Tokens")
    def tokens(self, obj: Skill) -> str:
        # What the skill adds inside a full-mode block (the fence and preamble are shared by all skills).
        badge = token_badge(skill_section(obj))
        return badge.label if badge else "—"

    @admin.display(description="Injection findings")
    def findings(self, obj: Skill) -> str:
        if not obj.injection_findings:
            return "—"
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li>{} ({}): <code>{}</code></li>",
                (
                    (f.get("rule", ""), f.get("severity", ""), f.get("excerpt", ""))
                    for f in obj.injection_findings
                ),
            ),
        )

    @admin.display(description="Body (escaped)")
    def preview(self, obj: Skill) -> str:
        # Escaped, preformatted text: a skill body is untrusted and must never render as HTML.
        return format_html(
            '<pre style="white-space: pre-wrap; max-height: 40em; overflow: auto">{}</pre>', obj.body
        )

    def save_model(self, request: HttpRequest, obj: Skill, form: Any, change: bool) -> None:
        skill_classify(
            skill=obj,
            data_class=obj.data_class,
            ceiling=obj.ceiling,
            enforcement=obj.enforcement,
            actor=request_actor(request),
        )

    enable_skills = _each_skill("Enable selected skills", "enabled", skill_enable)
    acknowledge_and_enable = _each_skill(
        "Acknowledge findings and enable selected skills", "enabled", skill_enable, acknowledge_findings=True
    )
    disable_skills = _each_skill("Disable selected skills", "disabled", skill_disable)


@admin.register(SkillAudit)
class SkillAuditAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Read-only: the audit is append-only."""

    list_display = ("created_at", "event", "skill_identifier", "source_name", "actor", "detail")
    list_filter = ("event",)
    search_fields = ("skill_identifier", "source_name", "actor")
    date_hierarchy = "created_at"
