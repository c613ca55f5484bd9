"""What completions consumed: one row per completion served, for cost reports (runs keep theirs on
their steps). Figures and identifiers only, never content."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from django.db import models
from django.db.models import F, Value
from django.utils import timezone

from agents.models.catalog import Configuration, LlmModel
from agents.models.clients import ApiClient
from agents.models.sql import CompiledUpdate
from agents.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS


class CompletionRecord(models.Model):
    """One served completion: who asked, for which configuration, which model served it, its
    provider-reported usage (None: not reported) and its cost from that model's prices."""

    request_id = models.CharField(max_length=32, unique=True)
    api_client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="completions")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="completions")
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, related_name="+")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    cache_write_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(
        max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"completion {self.request_id}"


def _cost_field() -> models.DecimalField:
    return models.DecimalField(max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, default=0)


_COST = _cost_field()  # the output field of the statements' cost values


class ClientDailyUsageQuerySet(models.QuerySet["ClientDailyUsage"]):
    """The two statements that move a client's day (agents/runtime/budget.py), each one ``UPDATE``
    compiled once per database (agents/models/sql.py ``CompiledUpdate``): every send runs both."""

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
        values: dict[str, Any] = {"client": client_id, "day": day, "tokens": tokens, "cost": cost}
        if token_room is not None:
            values["token_room"] = token_room
        if cost_room is not None:
            values["cost_room"] = cost_room
        statement = _RESERVE[token_room is not None, cost_room is not None]
        return statement.execute(using=self.db, now=timezone.now(), **values) == 1

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
        return _SETTLE.execute(
            using=self.db,
            client=client_id,
            day=day,
            reserved_tokens=reserved_tokens,
            reserved_cost=reserved_cost,
            tokens=tokens,
            cost=cost,
            now=timezone.now(),
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


def _reserve(*, tokens_limited: bool, cost_limited: bool) -> CompiledUpdate:
    """The reserving ``UPDATE`` for a client with these limits."""

    def build(**values: Any) -> tuple[models.QuerySet[ClientDailyUsage], dict[str, Any]]:
        rows = ClientDailyUsage.objects.filter(client_id=values["client"], day=values["day"])
        if tokens_limited:
            rows = rows.filter(tokens_used__lte=Value(values["token_room"]) - F("tokens_reserved"))
        if cost_limited:
            rows = rows.filter(
                cost_used__lte=Value(values["cost_room"], output_field=_COST) - F("cost_reserved")
            )
        return rows, {
            "tokens_reserved": F("tokens_reserved") + values["tokens"],
            "cost_reserved": F("cost_reserved") + Value(values["cost"], output_field=_COST),
            "updated_at": values["now"],
        }

    markers = dict(_MARKERS)
    if not tokens_limited:
        del markers["token_room"]
    if not cost_limited:
        del markers["cost_room"]
    return CompiledUpdate(build, **markers)


# Distinctive values to compile the statements with, each standing once in a statement.
_MARKERS: dict[str, Any] = {
    "client": -7_300_000_201,
    "day": datetime.date(1901, 2, 3),
    "now": datetime.datetime(1901, 2, 3, 4, 5, 6, 789, tzinfo=datetime.UTC),
    "tokens": -7_300_000_202,
    "cost": Decimal("-7300000.203"),
    "token_room": -7_300_000_204,
    "cost_room": Decimal("-7300000.205"),
}
_RESERVE = {
    (tokens, cost): _reserve(tokens_limited=tokens, cost_limited=cost)
    for tokens in (False, True)
    for cost in (False, True)
}
_SETTLE = CompiledUpdate(
    lambda client, day, reserved_tokens, reserved_cost, tokens, cost, now: (
        ClientDailyUsage.objects.filter(client_id=client, day=day),
        {
            "tokens_reserved": F("tokens_reserved") - reserved_tokens,
            "cost_reserved": F("cost_reserved") - Value(reserved_cost, output_field=_COST),
            "tokens_used": F("tokens_used") + tokens,
            "cost_used": F("cost_used") + Value(cost, output_field=_COST),
            "updated_at": now,
        },
    ),
    client=_MARKERS["client"],
    day=_MARKERS["day"],
    now=_MARKERS["now"],
    reserved_tokens=-7_300_000_206,
    reserved_cost=Decimal("-7300000.207"),
    tokens=-7_300_000_208,
    cost=Decimal("-7300000.209"),
)
