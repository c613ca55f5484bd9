"""How costs look in the API: exact decimal strings, never floats."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS


def cost_field(help_text: str, **kwargs: Any) -> serializers.DecimalField:
    """A cost as a decimal string with ten decimal places (the stored precision: nothing rounded)."""
    return serializers.DecimalField(
        max_digits=COST_MAX_DIGITS,
        decimal_places=COST_DECIMAL_PLACES,
        coerce_to_string=True,
        help_text=f"{help_text} In the currency of the models' prices, as an exact decimal string.",
        **kwargs,
    )
