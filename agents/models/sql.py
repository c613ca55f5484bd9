"""Building blocks for the step's single-statement queries, every name read from model metadata.

The step's claim (``AgentRunQuerySet.claim`` in ``agents/models/runs.py``), its addition to the run's
totals (``AgentRunQuerySet.totals_add``), its transcript read (``agents/runtime/transcript.py``) and
calibration update (``LlmModelQuerySet.calibrate`` in ``agents/models/catalog.py``) run once per step. The ORM cannot
express either as one statement (it has no ``UPDATE … RETURNING``), and compiling an ORM expression
tree costs more at every step than the statement it compiles to (about 1 ms against 0.08 ms for the
calibration update on SQLite). The reads a request makes before its provider call (the client by
its token, the configuration it names) and the budget's reserve and settle updates
(``ClientDailyUsageQuerySet`` in ``agents/models/usage.py``) are ORM statements compiled once
(:class:`Compiled`, :class:`CompiledUpdate`). The rest
is SQL text, assembled from the pieces here:
:class:`Table` reads table and column names from ``Model._meta`` and quotes them for the connection,
:func:`converted_row` passes a returned row through each field's own converters (as the ORM does),
and :class:`Float` renders arithmetic written in Python as double-precision SQL. Only PostgreSQL
and SQLite (3.35 or newer) are supported.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.sql import Query, UpdateQuery

_Model = TypeVar("_Model", bound=models.Model)


class Table:
    """A model's quoted table and column names on one connection, and its fields' value preparation."""

    def __init__(self, model: type[models.Model], connection: BaseDatabaseWrapper) -> None:
        self.model = model
        self.connection = connection
        self.name = connection.ops.quote_name(model._meta.db_table)

    def field(self, name: str) -> models.Field[Any, Any]:
        """Field ``name`` (``"pk"`` for the primary key), which must be a column of this table."""
        field = self.model._meta.pk if name == "pk" else self.model._meta.get_field(name)
        if not isinstance(field, models.Field) or not field.concrete:
            raise TypeError(f"{self.model.__name__}.{name} is not a column")
        return field

    def related(self, name: str) -> Table:
        """The table of the model that relation ``name`` (forward or reverse) leads to."""
        related = self.model._meta.get_field(name).related_model
        if not isinstance(related, type) or not issubclass(related, models.Model):
            raise TypeError(f"{self.model.__name__}.{name} is not a relation")
        return Table(related, self.connection)

    def column(self, name: str) -> str:
        """The quoted column of field ``name``, unqualified (as a SET target must be)."""
        column = self.field(name).column
        if column is None:
            raise TypeError(f"{self.model.__name__}.{name} has no column")
        return self.connection.ops.quote_name(column)

    def __getitem__(self, name: str) -> str:
        """The quoted column of field ``name``, qualified by the table."""
        return f"{self.name}.{self.column(name)}"

    def value(self, name: str, value: object) -> object:
        """``value`` as field ``name`` stores it on this connection."""
        return self.field(name).get_db_prep_value(value, self.connection, prepared=False)

    def columns(self) -> str:
        """Every concrete column, qualified, in ``_meta.concrete_fields`` order (see :meth:`fields`)."""
        return ", ".join(self[field.name] for field in self.fields())

    def fields(self) -> tuple[models.Field[Any, Any], ...]:
        return tuple(self.model._meta.concrete_fields)


@dataclass(frozen=True)
class Read:
    """A scalar subquery a statement returns as a column, and the field whose converters read it."""

    field: models.Field[Any, Any]
    sql: str
    params: tuple[object, ...] = ()


def converted_row(
    connection: BaseDatabaseWrapper,
    alias: str,
    fields: Sequence[models.Field[Any, Any]],
    row: Sequence[object],
) -> list[Any]:
    """``row`` (one value per field, in order) as the ORM would return it: each value through the
    backend's and the field's converters (a UUID stored as text, JSON, an aware datetime ...)."""
    return next(converted_rows(connection, alias, fields, [row]))


def converted_rows(
    connection: BaseDatabaseWrapper,
    alias: str,
    fields: Sequence[models.Field[Any, Any]],
    rows: Iterable[Sequence[object]],
) -> Iterator[list[Any]]:
    """Each of ``rows`` as :func:`converted_row` converts one, the converters looked up once."""
    compiler = connection.ops.compiler("SQLCompiler")(Query(None), connection, alias)
    converters = compiler.get_converters([field.get_col(field.model._meta.db_table) for field in fields])
    return iter(compiler.apply_converters(rows, converters))


def _operator(symbol: str, *, reflected: bool = False) -> Callable[[Float, Float | float], Float]:
    """The method behind ``Float <symbol> other``; ``reflected``: behind ``other <symbol> Float``."""

    def apply(self: Float, other: Float | float) -> Float:
        return Float._combine(other, symbol, self) if reflected else Float._combine(self, symbol, other)

    return apply


@dataclass(frozen=True)
class Float:
    """A double-precision SQL expression with its parameters.

    ``+ - * /`` with a float or another :class:`Float` build a parenthesised expression; every operand
    is cast to ``DOUBLE PRECISION`` (REAL on SQLite), so a rule written once in Python evaluates to
    the same IEEE-754 result on floats and in the database (PostgreSQL would otherwise read a Python
    float parameter as ``numeric``). :class:`FloatFunctions` adds ``max`` and ``min``.
    """

    sql: str
    params: tuple[object, ...] = ()

    @classmethod
    def of(cls, value: Float | float) -> Float:
        if isinstance(value, Float):
            return value
        return cls("CAST(%s AS DOUBLE PRECISION)", (float(value),))

    @classmethod
    def column(cls, column: str) -> Float:
        return cls(f"CAST({column} AS DOUBLE PRECISION)")

    @staticmethod
    def _combine(left: Float | float, operator: str, right: Float | float) -> Float:
        left, right = Float.of(left), Float.of(right)
        return Float(f"({left.sql} {operator} {right.sql})", left.params + right.params)

    __add__, __radd__ = _operator("+"), _operator("+", reflected=True)
    __sub__, __rsub__ = _operator("-"), _operator("-", reflected=True)
    __mul__, __rmul__ = _operator("*"), _operator("*", reflected=True)
    __truediv__, __rtruediv__ = _operator("/"), _operator("/", reflected=True)


class FloatFunctions:
    """Python's two-argument ``max`` and ``min`` over :class:`Float` on one connection (SQLite spells
    them ``MAX``/``MIN``, PostgreSQL ``GREATEST``/``LEAST``; no operand here is ever NULL)."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        sqlite = connection.vendor == "sqlite"
        self._greatest, self._least = ("MAX", "MIN") if sqlite else ("GREATEST", "LEAST")

    def greatest(self, a: Float | float, b: Float | float) -> Float:
        return self._call(self._greatest, a, b)

    def least(self, a: Float | float, b: Float | float) -> Float:
        return self._call(self._least, a, b)

    @staticmethod
    def _call(name: str, a: Float | float, b: Float | float) -> Float:
        left, right = Float.of(a), Float.of(b)
        return Float(f"{name}({left.sql}, {right.sql})", left.params + right.params)


Marker = int | str | Decimal | datetime.date  # a datetime is a date


class Compiled:
    """A read the ORM writes, compiled once per database alias and run again with other values.

    ``build(**values)`` returns the queryset (a ``values_list`` or a model queryset). It is compiled
    once with ``markers`` (one distinctive value per keyword, each of which must stand exactly once
    among the compiled parameters); each run puts its own values in the markers' places, adapted for
    the driver as the ORM adapts them (a date, a datetime, a decimal), so the ORM's query building and
    compiling (about 0.2 to 0.7 ms a statement on this project's) is not paid per request.
    """

    def __init__(self, build: Callable[..., Any], **markers: Marker) -> None:
        self._build = build
        self._markers = markers
        self._compiled: dict[str, tuple[str, tuple[object, ...], dict[str, int]]] = {}

    def _compile(self, alias: str) -> tuple[str, Sequence[object]]:
        compiled: tuple[str, Sequence[object]] = (
            self._build(**self._markers).query.get_compiler(using=alias).as_sql()
        )
        return compiled

    def _statement(self, alias: str, values: dict[str, Marker]) -> tuple[str, list[Any]]:
        connection = connections[alias]
        compiled = self._compiled.get(alias)
        if compiled is None:
            sql, compiled_params = self._compile(alias)
            params = list(compiled_params)
            places = {}
            for name, marker in self._markers.items():
                adapted = _adapted(connection, marker)
                if params.count(adapted) != 1:
                    raise ValueError(f"the marker of {name!r} stands {params.count(adapted)} times")
                places[name] = params.index(adapted)
            compiled = self._compiled[alias] = (sql, tuple(params), places)
        sql, compiled_params, places = compiled
        params = list(compiled_params)
        for name, value in values.items():
            params[places[name]] = _adapted(connection, value)
        return sql, params

    def rows(self, *, using: str = DEFAULT_DB_ALIAS, **values: Marker) -> list[tuple[Any, ...]]:
        """The rows for ``values`` (one per marker), as the database returns them (no converters)."""
        sql, params = self._statement(using, values)
        with connections[using].cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def first(self, model: type[_Model], *, using: str = DEFAULT_DB_ALIAS, **values: Marker) -> _Model | None:
        """The first row as an instance of ``model``, whose queryset ``build`` returns (every concrete
        field, in order), each value through its converters as the ORM reads it; None without rows."""
        rows = self.rows(using=using, **values)
        if not rows:
            return None
        fields = model._meta.concrete_fields
        row = converted_row(connections[using], using, fields, rows[0])
        return model.from_db(using, [field.attname for field in fields], row)


class CompiledUpdate(Compiled):
    """An ``UPDATE`` the ORM writes, compiled once per alias as :class:`Compiled` is: ``build(**values)``
    returns the queryset and the keyword arguments its ``update()`` would take."""

    def _compile(self, alias: str) -> tuple[str, Sequence[object]]:
        queryset, changes = self._build(**self._markers)
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(changes)
        compiled: tuple[str, Sequence[object]] = query.get_compiler(using=alias).as_sql()
        return compiled

    def execute(self, *, using: str = DEFAULT_DB_ALIAS, **values: Marker) -> int:
        """The number of rows updated, as ``QuerySet.update`` returns it."""
        sql, params = self._statement(using, values)
        with transaction.mark_for_rollback_on_error(using), connections[using].cursor() as cursor:
            cursor.execute(sql, params)
            return int(cursor.rowcount)


def _adapted(connection: BaseDatabaseWrapper, value: Marker) -> object:
    """``value`` as the ORM hands it to ``connection``'s driver."""
    if isinstance(value, datetime.datetime):
        return connection.ops.adapt_datetimefield_value(value)
    if isinstance(value, datetime.date):
        return connection.ops.adapt_datefield_value(value)
    if isinstance(value, Decimal):
        return connection.ops.adapt_decimalfield_value(value)
    return value
