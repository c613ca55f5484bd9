"""The cost page in admin: the report of ``manage.py cost_report`` for a range of days (UTC).

Served under the run list's URLs (``/admin/agents/agentrun/costs/``) to staff who may view runs.
The range comes from the query string (``?from=YYYY-MM-DD&to=YYYY-MM-DD``, default the last seven
days); a malformed or reversed range is shown as an error with the default range.
"""

from __future__ import annotations

import datetime

from django import forms
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from editors.cost_report import cost_report

DEFAULT_DAYS = 7


class RangeForm(forms.Form):
    start = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict[str, object]:
        data = super().clean() or self.cleaned_data
        start, end = data.get("start"), data.get("end")
        if isinstance(start, datetime.date) and isinstance(end, datetime.date) and start > end:
            raise forms.ValidationError("The first day is after the last day.")
        return data


def _range(form: RangeForm) -> tuple[datetime.date, datetime.date]:
    today = timezone.now().date()
    data = form.cleaned_data if form.is_valid() else {}
    end = data.get("end") or today
    start = data.get("start") or end - datetime.timedelta(days=DEFAULT_DAYS - 1)
    return start, end


def cost_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    form = RangeForm({"start": request.GET.get("from", ""), "end": request.GET.get("to", "")})
    start, end = _range(form)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Costs",
        "opts": model_admin.model._meta,
        "form": form,
        "start": start,
        "end": end,
        "report": cost_report(start=start, end=end),
    }
    return TemplateResponse(request, "admin/editors/costs/report.html", context)
