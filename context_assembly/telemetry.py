"""The attributes of the ``fit`` span (``config/tracing.py``): the budget's figures, never content."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from opentelemetry.util.types import AttributeValue


class _Breakdown(Protocol):
    window: int
    budget: int
    estimated: int
    remaining: int
    dropped_turns: int


class _Fitted(Protocol):
    """What the span reads of a ``FitResult`` (fitting.py imports this module, not the reverse)."""

    @property
    def breakdown(self) -> _Breakdown: ...
    @property
    def overflow(self) -> bool: ...


def fit_span_attributes(result: _Fitted) -> Mapping[str, AttributeValue]:
    breakdown = result.breakdown
    return {
        "govctx.fit.window": breakdown.window,
        "govctx.fit.budget": breakdown.budget,
        "govctx.fit.estimated_tokens": breakdown.estimated,
        "govctx.fit.remaining_tokens": breakdown.remaining,
        "govctx.fit.dropped_turns": breakdown.dropped_turns,
        "govctx.fit.overflow": result.overflow,
    }
