"""What each API client consumed per day, the figures its daily budgets are checked against
(``agents/runtime/budget.py``). Figures and identifiers only, never content."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from django.db import connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from catalog.models.clients import ApiClient
from catalog.models.sql import Statement, Table
from catalog.pricing import COST_DECIMAL_PLACES, COST_MAX_DIGITS


def _cost_field() -> models.DecimalField:
    return models.DecimalField(max_digits=COST_MAX_DIGITS, decimal_places=COST_DECIMAL_PLACES, default=0)


class ClientDailyUsageQuerySet(models.QuerySet["ClientDailyUsage"]):
    """The two statements that move a client's day (agents/runtime/budget.py), each one conditional
    ``UPDATE``. Every send runs both, so they are SQL text (``catalog/models/sql.py``)."""

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
        connection = connections[self.db]
        ops = connection.ops
        params: list[Any] = [
            tokens,
            ops.adapt_decimalfield_value(cost),
            ops.adapt_datetimefield_value(timezone.now()),
        ]
        params += [client_id, ops.adapt_datefield_value(day)]
        if token_room is not None:
            params.append(token_room)
        if cost_room is not None:
            params.append(ops.adapt_decimalfield_value(cost_room))
        statement = _RESERVE[token_room is not None, cost_room is not None]
        return statement.execute(connection, params) == 1

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
        connection = connections[self.db]
        ops = connection.ops
        params = [
            reserved_tokens,
            ops.adapt_decimalfield_value(reserved_cost),
            tokens,
            ops.adapt_decimalfield_value(cost),
            ops.adapt_datetimefield_value(timezone.now()),
            client_id,
            ops.adapt_datefield_value(day),
        ]
        return _SETTLE.execute(connection, params)


# SQLite keeps a decimal column with numeric affinity: a cost and its arithmetic are cast, as the ORM's are.
_COST = "CAST(%s AS NUMERIC)"


def _moved(day: Table, field: str, sign: str) -> str:
    """``column = column + %s`` (or ``-``), the parameter and the sum cast for a cost."""
    column = day.column(field)
    if field.startswith("cost"):
        return f"{column} = CAST({column} {sign} {_COST} AS NUMERIC)"
    return f"{column} = {column} {sign} %s"


def _reserve(token_limit: bool, cost_limit: bool) -> Statement:
    def build(connection: BaseDatabaseWrapper) -> str:
        day = Table(ClientDailyUsage, connection)
        where = [f"{day.column('client')} = %s", f"{day.column('day')} = %s"]
        if token_limit:
            where.append(f"{day.column('tokens_used')} <= %s - {day.column('tokens_reserved')}")
        if cost_limit:
            where.append(f"{day.column('cost_used')} <= {_COST} - {day.column('cost_reserved')}")
        moved = [_moved(day, "tokens_reserved", "+"), _moved(day, "cost_reserved", "+")]
        return (
            f"UPDATE {day.name} SET {', '.join(moved)}, {day.column('updated_at')} = %s "
            f"WHERE {' AND '.join(where)}"
        )

    return Statement(build)


def _settle(connection: BaseDatabaseWrapper) -> str:
    day = Table(ClientDailyUsage, connection)
    moved = [
        _moved(day, "tokens_reserved", "-"),
        _moved(day, "cost_reserved", "-"),
        _moved(day, "tokens_used", "+"),
        _moved(day, "cost_used", "+"),
    ]
    return (
        f"UPDATE {day.name} SET {', '.join(moved)}, {day.column('updated_at')} = %s "
        f"WHERE {day.column('client')} = %s AND {day.column('day')} = %s"
    )


_RESERVE = {(tokens, cost): _reserve(tokens, cost) for tokens in (False, True) for cost in (False, True)}
_SETTLE = Statement(_settle)


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
