"""``{% editors_dashboard %}``: the editors' dashboard (editors/dashboard.py) drawn on the admin index."""

from __future__ import annotations

from typing import Any

from django import template

from editors.admin.charts import window_fill_chart
from editors.dashboard import editors_dashboard

register = template.Library()

DASHBOARD_PERMISSION = "catalog.view_configuration"


@register.inclusion_tag("admin/editors/includes/editors_dashboard.html", takes_context=True)
def editors_dashboard_panel(context: Any) -> dict[str, Any]:
    """Nothing for users who may not view configurations; otherwise the panels with their charts."""
    request = context.get("request")
    if request is None or not request.user.has_perm(DASHBOARD_PERMISSION):
        return {"dashboard": None}
    dashboard = editors_dashboard()
    charts = [window_fill_chart(panel.points).html() if panel.points else None for panel in dashboard.panels]
    return {"dashboard": dashboard, "panels": list(zip(dashboard.panels, charts, strict=True))}
