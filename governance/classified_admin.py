"""Admin for classified rows (snippets, skills, configuration prompts): one promote action, one report.

An interface module: it calls :func:`governance.services.enforcement_promote` and imports no other app.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import ModelAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from governance.actors import request_actor
from governance.classified import ClassifiedBase
from governance.services import PromotionResult, enforcement_promote

PROMOTED_IN_ADMIN = "Promoted to enforce."


def promotion_report(
    model_admin: ModelAdmin,
    request: HttpRequest,
    *,
    result: PromotionResult,
    rows: Sequence[ClassifiedBase],
    log_message: str = PROMOTED_IN_ADMIN,
) -> None:
    """Log each promoted row in its own admin history, then one message for the promoted rows and
    one for each row skipped with its reason."""
    by_identifier = {row.identifier: row for row in rows}
    for identifier in result.promoted:
        # log_change uses the object's own content type, whichever admin reports it.
        model_admin.log_change(request, by_identifier[identifier], log_message)
    if result.promoted:
        model_admin.message_user(request, f"Promoted: {', '.join(result.promoted)}.", messages.SUCCESS)
    for identifier, reason in result.skipped:
        model_admin.message_user(request, f"Not promoted {identifier}: {reason}.", messages.WARNING)


class ClassifiedAdmin(admin.ModelAdmin):
    """The base of a classified model's ``ModelAdmin``: list ``"promote_to_enforce"`` in ``actions``."""

    @admin.action(description="Promote selected %(verbose_name_plural)s to enforce", permissions=["change"])
    def promote_to_enforce(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        rows = list(queryset)
        result = enforcement_promote(rows=rows, actor=request_actor(request))
        promotion_report(self, request, result=result, rows=rows)
