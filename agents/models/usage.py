"""What each API client consumed per day, the figures its daily budgets are checked against
(``agents/runtime/budget.py``). Figures and identifiers only, never content."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from django.db import models
from django.db.models import F
from django.utils import timezone

from catalog.models.clients import ApiClient
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS


def _cost_field() -> models.DecimalField:
    return models.DecimalField(max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, default=0)


class ClientDailyUsageQuerySet(models.QuerySet["ClientDailyUsage"]):
    """The two statements that move a client's day (agents/runtime/budget.py), each one conditional
    ``UPDATE`` through the ORM (``filter(...).update(...)`` with ``F()``): every send runs both."""

    def reserve(
        self,
        *,
        client_id: int,
        day: datetime.date,
        tokens: int,
        cost: Decimal,
        token_room: int | None,
        cost_room: Decimal | None,
    ) -> bool:
        """Add ``tokens`` and ``cost`` to the day's reservations if ``tokens_used + tokens_reserved``
        is at most ``token_room`` and the cost likewise (None: no such limit). False when the row
        has no room, or does not exist."""
        # One filter() call with plain values: each clone and each wrapped value costs ORM time on
        # every send (about 0.9 ms for this statement on SQLite, against 1.1 ms built step by step).
        limits: dict[str, Any] = {}
        if token_room is not None:
            limits["tokens_used__lte"] = token_room - F("tokens_reserved")
        if cost_room is not None:
            limits["cost_used__lte"] = cost_room - F("cost_reserved")
        updated = self.filter(client_id=client_id, day=day, **limits).update(
            tokens_reserved=F("tokens_reserved") + tokens,
            cost_reserved=F("cost_reserved") + cost,
            updated_at=timezone.now(),
        )
        return updated == 1

    def settle(
        self,
        *,
        client_id: int,
        day: datetime.date,
        reserved_tokens: int,
        reserved_cost: Decimal,
        tokens: int,
        cost: Decimal,
    ) -> int:
        """Take a reservation of ``reserved_tokens`` and ``reserved_cost`` off the day and add what was
        used; the number of rows updated."""
        return self.filter(client_id=client_id, day=day).update(
            tokens_reserved=F("tokens_reserved") - reserved_tokens,
            cost_reserved=F("cost_reserved") - reserved_cost,
            tokens_used=F("tokens_used") + tokens,
            cost_used=F("cost_used") + cost,
            updated_at=timezone.now(),
        )


class ClientDailyUsage(models.Model):
    """What one client spent and holds on one UTC day (agents/runtime/budget.py): ``*_used`` is
    settled (provider-reported) consumption, ``*_reserved`` what sends in flight hold. Moved only by
    single conditional ``UPDATE`` statements, never read-modify-write."""

    client = models.ForeignKey(ApiClient, on_delete=models.CASCADE, related_name="daily_usage")
    day = models.DateField()
    tokens_used = models.BigIntegerField(default=0)
    tokens_reserved = models.BigIntegerField(default=0)
    cost_used = _cost_field()
    cost_reserved = _cost_field()
    updated_at = models.DateTimeField(auto_now=True)

    objects = ClientDailyUsageQuerySet.as_manager()

    class Meta:
        ordering = ["-day", "client"]
        verbose_name_plural = "client daily usage"
        constraints = [
            models.UniqueConstraint(fields=["client", "day"], name="client_daily_usage_unique_day"),
            # A reservation released or settled twice would drive these below zero: refused.
            models.CheckConstraint(
                condition=models.Q(tokens_reserved__gte=0, cost_reserved__gte=0, tokens_used__gte=0),
                name="client_daily_usage_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.client_id} on {self.day}"
