"""SQL statements written out once for what every request runs.

Building a statement through the ORM (``filter(...).update(...)``, ``.first()``) costs about ten times
running it: some 0.3 ms of CPU per statement against 0.03 ms on SQLite (``bench/gateway.py``'s
profile, docs/results.md "Per request"). The few statements every completion runs (its client by
token, its configuration's key, the budget's reservation and settlement) are therefore written here
as SQL, once per database vendor, and run through Django's own connection (its cursor, its parameter
style, its transactions). Everything else keeps the ORM.

Names come from the models (``Model._meta``), quoted by the connection; values are always parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

Quote = Callable[[str], str]


class Statement:
    """One statement, ``build(quote, vendor)`` made into SQL the first time it runs on a vendor."""

    def __init__(self, build: Callable[[Quote, str], str]) -> None:
        self._build = build
        self._sql: dict[str, str] = {}

    def sql(self, connection: BaseDatabaseWrapper) -> str:
        sql = self._sql.get(connection.vendor)
        if sql is None:
            sql = self._sql[connection.vendor] = self._build(connection.ops.quote_name, connection.vendor)
        return sql

    def execute(self, params: Sequence[Any], using: str = DEFAULT_DB_ALIAS) -> int:
        """Run it with ``params``; the number of rows it changed."""
        connection = connections[using]
        with connection.cursor() as cursor:
            cursor.execute(self.sql(connection), params)
            return cursor.rowcount

    def row(self, params: Sequence[Any], using: str = DEFAULT_DB_ALIAS) -> tuple[Any, ...] | None:
        """Its first row with ``params``, or None."""
        connection = connections[using]
        with connection.cursor() as cursor:
            cursor.execute(self.sql(connection), params)
            return cursor.fetchone()


def table(model: type[Model], quote: Quote) -> str:
    return quote(model._meta.db_table)


def column(model: type[Model], field: str, quote: Quote) -> str:
    return quote(model._meta.get_field(field).column)
