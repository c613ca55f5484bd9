"""Admin actions declaring a configuration's answers deliverable down to a zone (or clearing that):
each shows first what the change would refuse or newly allow (editors/admin/what_if_page.py), then
calls :func:`agents.services.answers_declassify`, which refuses a loosening without the
``governance.reclassify`` permission and records every change as a ``reclassified`` event. Every action,
clearing included, needs the permission to change the configuration."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from catalog.models import Configuration
from catalog.services import answers_declassify
from editors.admin.what_if_page import declassification_gate
from governance.actors import request_actor
from governance.errors import ReclassifyForbidden
from governance.vocabulary import TrustZone

DECLASSIFY_ACTIONS = [f"declassify_answers_to_{zone.value}" for zone in TrustZone] + [
    "clear_answers_declassification"
]


def _declassify(
    admin_view: Any, request: HttpRequest, queryset: QuerySet[Configuration], zone: TrustZone | None
) -> HttpResponse | None:
    page = declassification_gate(admin_view, request, queryset, zone)
    if page is not None:
        return page  # what it would refuse or newly allow, with a button that confirms
    actor = request_actor(request)
    for configuration in queryset:
        try:
            answers_declassify(configuration=configuration, zone=zone, actor=actor)
        except ReclassifyForbidden as refused:
            admin_view.message_user(request, refused.message, level=messages.ERROR)
        else:
            named = zone.label if zone is not None else "their label"
            admin_view.message_user(request, f"{configuration.identifier}: answers deliverable to {named}.")
    return None


def _action(zone: TrustZone | None) -> Any:
    description = (
        f"Declare answers deliverable to {zone.label} (declassification, recorded)"
        if zone is not None
        else "Clear the declassification of answers (recorded)"
    )

    # Only those who may edit the configuration change what its answers may reach, either way; a
    # loosening also needs the reclassify permission (checked by the service).
    @admin.action(description=description, permissions=["change"])
    def action(self: Any, request: HttpRequest, queryset: QuerySet[Configuration]) -> HttpResponse | None:
        return _declassify(self, request, queryset, zone)

    return action


class DeclassifyActions:
    """The declassification actions, mixed into the configuration admin."""

    declassify_answers_to_local = _action(TrustZone.LOCAL)
    declassify_answers_to_private_hosted = _action(TrustZone.PRIVATE_HOSTED)
    declassify_answers_to_external_eu = _action(TrustZone.EXTERNAL_EU)
    declassify_answers_to_external_global = _action(TrustZone.EXTERNAL_GLOBAL)
    clear_answers_declassification = _action(None)
