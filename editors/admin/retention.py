"""The retention page in admin: per kind of stored content, its expiry and what a purge would remove
now (editors/retention.py). It purges nothing: ``manage.py purge_expired`` and Celery beat do.

Served under the run list's URLs (``/admin/agents/agentrun/retention/``) to staff who may view runs.
"""

from __future__ import annotations

from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from editors.retention import retention_plan


def retention_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Retention",
        "opts": model_admin.model._meta,
        "lines": retention_plan(),
    }
    return TemplateResponse(request, "admin/editors/retention.html", context)
