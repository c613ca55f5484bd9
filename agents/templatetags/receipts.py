"""``{% load receipts %}``: ``{{ step.receipt|receipt_table }}`` renders a receipt as a table
(agents/receipt_table.py, admin/agents/includes/receipt.html); an empty receipt reads "—"."""

from __future__ import annotations

from typing import Any

from django import template
from django.template.loader import render_to_string

from agents.receipt_table import receipt_table as table

register = template.Library()


@register.filter
def receipt_table(receipt: Any) -> str:
    if not isinstance(receipt, dict) or not receipt:
        return "—"
    # The template escapes every value; render_to_string returns it marked safe.
    return render_to_string("admin/agents/includes/receipt.html", {"table": table(receipt)})
