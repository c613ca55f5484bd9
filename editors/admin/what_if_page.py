"""The what-if page: before a governance change is saved, what it would refuse or newly allow.

A change form's save (:class:`WhatIfAdmin`) and the declassification actions
(editors/admin/declassify.py) first compute the change's effect with :func:`editors.what_if.what_if`. An
effect shows this page instead of saving: the sends and recent runs whose verdict changes, the form's
own values carried in hidden fields, a button that posts them again with the effect's digest, and a
link back that saves nothing. A confirmation whose digest no longer matches (the rows changed
meanwhile) shows the page again; a change with no effect is saved at once, with a message saying so
(docs/decisions/0026-what-if-before-a-governance-change.md). The save itself is the admin's usual one,
with its governance event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from catalog.models import Configuration
from editors.what_if import Change, DeclassificationChange, WhatIf, what_if
from governance.policy import enforcement_mode
from governance.vocabulary import TrustZone

CONFIRM_FIELD = "_what_if_confirmed"
NO_EFFECT = "What if: no configuration, API client or recent run changes its verdict with this change."
TEMPLATE = "admin/editors/what_if.html"


@dataclass(frozen=True)
class ProposedChange:
    """What a save would change, and how the page names it."""

    change: Change | tuple[Change, ...]
    summary: str
    confirm: str = "Save the change"  # the confirming button


def what_if_gate(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    proposed: ProposedChange | None,
    *,
    original: models.Model | None,
    cancel_url: str,
) -> HttpResponse | None:
    """The what-if page for ``proposed``, or None when the save may go ahead: nothing changes, the
    change has no effect (said in a message), or the request confirms the effect as it still is."""
    if proposed is None:
        return None
    effect = what_if(proposed.change)
    if not effect.has_effect:
        model_admin.message_user(request, NO_EFFECT, messages.INFO)
        return None
    confirmed = request.POST.get(CONFIRM_FIELD, "")
    if confirmed == effect.digest:
        return None
    return what_if_page(
        model_admin, request, effect, proposed, original=original, cancel_url=cancel_url,
        stale=bool(confirmed),
    )  # fmt: skip


def what_if_page(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    effect: WhatIf,
    proposed: ProposedChange,
    *,
    original: models.Model | None,
    cancel_url: str,
    stale: bool,
) -> TemplateResponse:
    reposted = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in ("csrfmiddlewaretoken", CONFIRM_FIELD)
        for value in values
    ]
    return TemplateResponse(
        request,
        TEMPLATE,
        {
            **model_admin.admin_site.each_context(request),
            "title": f"What if: {proposed.summary}",
            "confirm_label": proposed.confirm,
            "opts": model_admin.model._meta,
            "original": original,
            "effect": effect,
            "reposted": reposted,
            "confirm_field": CONFIRM_FIELD,
            "cancel_url": cancel_url,
            "stale": stale,
            "mode": enforcement_mode().value,
        },
    )


class WhatIfAdmin(admin.ModelAdmin):
    """Put before a model admin's bases: a change form's save shows the what-if page first when
    :meth:`what_if_change` names a governance change with an effect."""

    def what_if_change(self, live: Any, proposed: Any) -> ProposedChange | None:
        """The governance change of saving ``proposed`` (the form's unsaved instance) over ``live``."""
        return None

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if request.method == "POST" and object_id is not None and "_saveasnew" not in request.POST:
            page = self.what_if_form_gate(request, unquote(object_id))
            if page is not None:
                return page
        return super().changeform_view(request, object_id, form_url, extra_context)

    def what_if_form_gate(self, request: HttpRequest, object_id: str) -> HttpResponse | None:
        """The form bound as the save will bind it; an invalid form or a user who may not change the
        row is left to the admin's own answer."""
        try:
            live = self.get_queryset(request).filter(pk=object_id).first()
        except (ValueError, ValidationError):
            return None
        if live is None or not self.has_change_permission(request, live):
            return None
        form_class = self.get_form(request, live, change=True)
        form = form_class(request.POST, request.FILES, instance=self.model._default_manager.get(pk=live.pk))
        if not form.is_valid():
            return None
        opts = self.model._meta
        cancel_url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[live.pk])
        proposed = self.what_if_change(live, form.instance)
        return what_if_gate(self, request, proposed, original=live, cancel_url=cancel_url)


class DeleteWhatIfAdmin(admin.ModelAdmin):
    """Put before a model admin's bases: confirming a deletion shows the what-if page first when
    :meth:`what_if_deletion` names a change with an effect. The bulk delete action, which would skip
    the page, is not offered."""

    def what_if_deletion(self, obj: Any) -> ProposedChange | None:
        return None

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST":
            obj = self.get_object(request, unquote(object_id))
            if obj is not None and self.has_delete_permission(request, obj):
                opts = self.model._meta
                cancel_url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
                proposed = self.what_if_deletion(obj)
                page = what_if_gate(self, request, proposed, original=obj, cancel_url=cancel_url)
                if page is not None:
                    return page
        return super().delete_view(request, object_id, extra_context)


def declassification_gate(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet[Configuration],
    zone: TrustZone | None,
) -> HttpResponse | None:
    """The what-if page for declaring the answers of ``queryset`` deliverable to ``zone`` (None:
    clearing the declaration), or None to go ahead. The confirmation posts the action again."""
    declared = zone.value if zone is not None else ""
    changing = [
        configuration for configuration in queryset if configuration.answers_deliverable_to != declared
    ]
    if not changing:
        return None
    named = zone.label if zone is not None else "their label (declassification cleared)"
    identifiers = ", ".join(configuration.identifier for configuration in changing)
    proposed = ProposedChange(
        change=tuple(DeclassificationChange(configuration.pk, zone) for configuration in changing),
        summary=f"answers of {identifiers} deliverable to {named}",
    )
    cancel_url = reverse("admin:catalog_configuration_changelist")
    return what_if_gate(model_admin, request, proposed, original=None, cancel_url=cancel_url)
