"""The governance event log as registered in admin: governance's read-only log, with the readiness page
(editors/admin/readiness.py), and each event's source and configuration linked to their admin pages
where the row still exists.

The governance app names rows by identifier only (its policy core imports no other app, and the log
must outlive the rows); this module, which may read snippets, skills and configurations, resolves the
identifiers in the list's own query (one subquery per kind, on unique columns) rather than per row.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import CharField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Cast, Concat
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from catalog.models import Configuration
from editors.admin.readiness import GovernanceEventWithReadinessAdmin
from governance.models import GovernanceEvent
from governance.vocabulary import SourceKind
from skills.models import Skill
from snippets.models import Snippet

# The source kinds that name a row, with the annotation holding its primary key and its admin page.
_SOURCE_ROWS = {
    SourceKind.SNIPPET.value: ("snippet_pk", "admin:snippets_snippet_change"),
    SourceKind.SKILL.value: ("skill_pk", "admin:skills_skill_change"),
    SourceKind.SYSTEM_PROMPT.value: ("prompt_configuration_pk", "admin:catalog_configuration_change"),
}


def _first_pk(queryset: QuerySet) -> Subquery:  # type: ignore[type-arg]
    return Subquery(queryset.values("pk")[:1])


class GovernanceEventLinkedAdmin(GovernanceEventWithReadinessAdmin):
    list_display = tuple(
        "configuration_link" if name == "configuration" else name
        for name in GovernanceEventWithReadinessAdmin.list_display
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[GovernanceEvent]:
        identifier = OuterRef("source_identifier")
        # A skill's identifier is "<source id>:<path>" (skills.models.Skill.identifier).
        skill_keys = Skill.objects.annotate(
            key=Concat(Cast("source_id", CharField()), Value(":"), "path", output_field=CharField())
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                snippet_pk=_first_pk(Snippet.objects.filter(identifier=identifier)),
                skill_pk=_first_pk(skill_keys.filter(key=identifier)),
                prompt_configuration_pk=_first_pk(Configuration.objects.filter(identifier=identifier)),
                configuration_pk=_first_pk(
                    Configuration.objects.filter(identifier=OuterRef("configuration"))
                ),
            )
        )

    def source_url(self, obj: GovernanceEvent) -> str:
        pk_name, page = _SOURCE_ROWS.get(obj.source_kind, ("", ""))
        pk = getattr(obj, pk_name, None) if pk_name else None
        return reverse(page, args=[pk]) if pk is not None else ""

    @admin.display(description="Configuration", ordering="configuration")
    def configuration_link(self, obj: GovernanceEvent) -> str:
        pk = getattr(obj, "configuration_pk", None)
        if pk is None:
            return obj.configuration or "—"
        url = reverse("admin:catalog_configuration_change", args=[pk])
        return format_html('<a href="{}">{}</a>', url, obj.configuration)


# Importing governance.admin registered the plain event log; replace it with the extended one.
admin.site.unregister(GovernanceEvent)
admin.site.register(GovernanceEvent, GovernanceEventLinkedAdmin)
