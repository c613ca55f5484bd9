"""Building blocks for the step's single-statement queries, every name read from model metadata.

The step's claim (``AgentRunQuerySet.claim`` in ``agents/models/runs.py``), its addition to the run's
totals (``AgentRunQuerySet.totals_add``), its transcript read (``agents/runtime/transcript.py``) and
calibration update (``LlmModelQuerySet.calibrate`` in ``catalog/models/catalog.py``) run once per step. The ORM cannot
express either as one statement (it has no ``UPDATE … RETURNING``), and compiling an ORM expression
tree costs more at every step than the statement it compiles to (about 1 ms against 0.08 ms for the
calibration update on SQLite). So are the step's lease updates (``agents/runtime/leases.py``) and the
rows it writes after its lease check (``agents/runtime/held_writes.py``: on PostgreSQL a tool call's
claim and result are one statement with the check). The statements every API request runs are SQL
text too, built once per database vendor (:class:`Statement`): its client by token and its
configuration's key (``catalog/selectors.py``), the budget's reserve and settle updates
(``ClientDailyUsageQuerySet`` in ``agents/models/usage.py``) and the rows every step or request
writes (:func:`row_inserted`). Through the ORM each cost about 0.3 ms of CPU on SQLite against
0.03 ms run as text, and a gateway's cost per request is what its users compare (docs/results.md,
"Gateway"). Every other statement is an ordinary ORM call. All are assembled from the pieces here:
:class:`Table` reads table and column names from ``Model._meta`` and quotes them for the connection,
:func:`converted_row` passes a returned row through each field's own converters (as the ORM does),
and :class:`~catalog.models.float_sql.Float` renders arithmetic written in Python as double-precision
SQL. Only PostgreSQL and SQLite (3.35 or newer) are supported.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from django.db import connections, models, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.db.models import signals
from django.db.models.sql import Query

from config.caches import cache_register
from config.lru import LruCache

M = TypeVar("M", bound=models.Model)

# Fields and quoted names by (model, name) and (model, vendor, name): a step builds its statements anew
# each time, and looking the same names up in the model's metadata was a measurable part of that.
_FIELDS: dict[tuple[type[models.Model], str], models.Field[Any, Any]] = {}
_COLUMNS: dict[tuple[type[models.Model], str, str], str] = {}


class Table:
    """A model's quoted table and column names on one connection, and its fields' value preparation."""

    def __init__(self, model: type[models.Model], connection: BaseDatabaseWrapper) -> None:
        self.model = model
        self.connection = connection
        self.name = connection.ops.quote_name(model._meta.db_table)

    def field(self, name: str) -> models.Field[Any, Any]:
        """Field ``name`` (``"pk"`` for the primary key), which must be a column of this table."""
        found = _FIELDS.get((self.model, name))
        if found is not None:
            return found
        field = self.model._meta.pk if name == "pk" else self.model._meta.get_field(name)
        if not isinstance(field, models.Field) or not field.concrete:
            raise TypeError(f"{self.model.__name__}.{name} is not a column")
        _FIELDS[(self.model, name)] = field
        return field

    def related(self, name: str) -> Table:
        """The table of the model that relation ``name`` (forward or reverse) leads to."""
        related = self.model._meta.get_field(name).related_model
        if not isinstance(related, type) or not issubclass(related, models.Model):
            raise TypeError(f"{self.model.__name__}.{name} is not a relation")
        return Table(related, self.connection)

    def column(self, name: str) -> str:
        """The quoted column of field ``name``, unqualified (as a SET target must be)."""
        key = (self.model, self.connection.vendor, name)
        quoted = _COLUMNS.get(key)
        if quoted is None:
            column = self.field(name).column
            if column is None:
                raise TypeError(f"{self.model.__name__}.{name} has no column")
            quoted = _COLUMNS[key] = self.connection.ops.quote_name(column)
        return quoted

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


class Statement:
    """SQL text that ``build(connection)`` makes from :class:`Table` names, made once per database vendor
    and then run as it is, its values always parameters."""

    def __init__(self, build: Callable[[BaseDatabaseWrapper], str]) -> None:
        self._build = build
        self._sql: dict[str, str] = {}

    def sql(self, connection: BaseDatabaseWrapper) -> str:
        sql = self._sql.get(connection.vendor)
        if sql is None:
            sql = self._sql[connection.vendor] = self._build(connection)
        return sql

    def execute(self, connection: BaseDatabaseWrapper, params: Sequence[Any]) -> int:
        """Run it with ``params``; the number of rows it changed."""
        with connection.cursor() as cursor:
            return executed(cursor, self.sql(connection), params).rowcount

    def row(self, connection: BaseDatabaseWrapper, params: Sequence[Any]) -> tuple[Any, ...] | None:
        """Its first row with ``params``, or None."""
        with connection.cursor() as cursor:
            return executed(cursor, self.sql(connection), params).fetchone()


def executed(cursor: CursorWrapper, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> CursorWrapper:
    """``cursor`` after ``cursor.execute(sql, params)``, for SQL text written with ``%s`` placeholders.

    On SQLite the values go by name (``%(p0)s``, ``%(p1)s`` ..., a dictionary of parameters, which
    Django's SQLite backend supports as it supports a list): with a list, that backend turns every
    ``%s`` into ``?`` by a regular expression over the whole text at each execution, which cost more
    than the rest of a short statement's execution (65,000 instructions a statement on average over
    the six of a gateway request, 2% of its instructions). Named values are put in by Python's ``%``
    operator instead, and the text with named placeholders is made once per statement
    (:data:`_NAMED`). On other databases, or with values named already, the call is
    ``cursor.execute(sql, params)`` itself."""
    if cursor.db.vendor != "sqlite" or isinstance(params, Mapping):  # values named already: as they are
        cursor.execute(sql, params)
        return cursor
    named, names = _NAMED.get_or_build(sql, lambda: _named_placeholders(sql))
    cursor.execute(named, dict(zip(names, params, strict=True)))
    return cursor


# A placeholder as Django's SQLite backend finds one in SQL text (a ``%%`` is a literal ``%``).
_FORMAT_PLACEHOLDER = re.compile(r"(?<!%)%s")


def _named_placeholders(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with its ``%s`` placeholders named in order, and the names."""
    names: list[str] = []

    def named(_: re.Match[str]) -> str:
        names.append(f"p{len(names)}")
        return f"%({names[-1]})s"

    return _FORMAT_PLACEHOLDER.sub(named, sql), tuple(names)


_NAMED: LruCache[str, tuple[str, tuple[str, ...]]] = cache_register(
    LruCache(512),
    name="named_placeholders",
    key="the SQL text of a statement run by executed() on SQLite",
    invalidation="nothing: the named text is a pure function of the text",
)


def statement_text(connection: BaseDatabaseWrapper, key: Hashable, build: Callable[[], str]) -> str:
    """The SQL text ``build()`` makes for ``key`` on ``connection``'s database, built once per process:
    for a statement a step runs every time with the same shape (the columns it sets, the conditions
    it checks) and other values. ``key`` names the statement and everything its text depends on
    besides the database; ``build`` must make the same text for the same key."""
    cache_key = (connection.alias, connection.vendor, key)
    text = _STATEMENT_TEXTS.get(cache_key)
    if text is None:
        text = _STATEMENT_TEXTS.put_absent(cache_key, build())
    return text


_STATEMENT_TEXTS: LruCache[tuple[str, str, Hashable], str] = cache_register(
    LruCache(256),
    name="statement_texts",
    key="database alias and vendor, the statement and its shape (the columns it sets, its conditions)",
    invalidation="nothing: a statement's text is a function of its shape and the models' metadata",
)


def row_inserted(instance: M) -> M:
    """``instance.save(force_insert=True)`` as one ``INSERT … RETURNING`` of SQL text, for a row written
    on every step or request (a step's row and message, a completion's ledger row); the instance, saved.
    A model with signal receivers, or a row the ORM would insert with SQL of its own, is saved by the
    ORM."""
    model = type(instance)
    alias = router.db_for_write(model)
    connection = connections[alias]
    parts = None if has_save_receivers(model) else insert_parts(instance, connection)
    if parts is None:
        instance.save(force_insert=True, using=alias)
        return instance
    columns, values = parts
    sql = (
        f"INSERT INTO {columns.table} ({columns.column_list}) VALUES ({', '.join(['%s'] * len(values))}) "
        f"RETURNING {columns.pk}"
    )
    with connection.cursor() as cursor:
        row = executed(cursor, sql, values).fetchone()
    return row_saved(instance, row[0], alias)


def row_saved(instance: M, pk: object, alias: str) -> M:
    """``instance`` as the ORM leaves a row it inserted: its primary key ``pk`` (as the database
    returned it), saved in database ``alias`` (Django's documented ``Model._state``)."""
    instance.pk = type(instance)._meta.pk.to_python(pk)
    instance._state.adding = False
    instance._state.db = alias
    return instance


def has_save_receivers(model: type[models.Model]) -> bool:
    return signals.pre_save.has_listeners(model) or signals.post_save.has_listeners(model)


@dataclass(frozen=True)
class InsertColumns:
    """What the ORM's insert of a ``model`` row writes on one database vendor, apart from its values:
    the fields (every concrete field but an automatic primary key or a generated one, in the ORM's
    order), the quoted table, columns and primary key, and each value's placeholder in an
    ``INSERT … SELECT`` (:func:`typed_placeholder`)."""

    fields: tuple[models.Field[Any, Any], ...]
    table: str
    columns: tuple[str, ...]
    placeholders: tuple[str, ...]
    pk: str  # the quoted primary key column
    column_list: str  # the columns, comma-separated, as a statement names them
    placeholder_list: str  # the placeholders, comma-separated


def insert_columns(model: type[models.Model], connection: BaseDatabaseWrapper) -> InsertColumns | None:
    """:class:`InsertColumns` of ``model`` on ``connection``'s vendor, built once per process; None for a
    model with a field the ORM writes with a placeholder of its own (``get_placeholder``)."""
    columns = _INSERT_COLUMNS.get((model, connection.vendor))
    if columns is None:
        columns = _INSERT_COLUMNS.put_absent((model, connection.vendor), _insert_columns(model, connection))
    return columns or None


def _insert_columns(model: type[models.Model], connection: BaseDatabaseWrapper) -> InsertColumns | tuple[()]:
    meta = model._meta
    fields = tuple(
        field for field in meta.local_concrete_fields if field is not meta.auto_field and not field.generated
    )
    if any(hasattr(field, "get_placeholder") for field in fields):
        return ()  # stored as "no plan" (the cache never stores None)
    table = Table(model, connection)
    columns = tuple(table.column(field.name) for field in fields)
    placeholders = tuple(typed_placeholder(field, connection) for field in fields)
    return InsertColumns(
        fields=fields,
        table=table.name,
        columns=columns,
        placeholders=placeholders,
        pk=table.column(meta.pk.name),
        column_list=", ".join(columns),
        placeholder_list=", ".join(placeholders),
    )


def insert_parts(
    instance: models.Model, connection: BaseDatabaseWrapper
) -> tuple[InsertColumns, list[Any]] | None:
    """The columns of ``instance``'s model (:func:`insert_columns`) and the values the ORM's insert of
    ``instance`` would write, one per field (``pre_save``, then ``get_db_prep_save``); None for a row
    the ORM would insert with SQL of its own (an expression, a field's own placeholder)."""
    columns = insert_columns(type(instance), connection)
    if columns is None:
        return None
    values: list[Any] = []
    for field in columns.fields:
        value = field.pre_save(instance, add=True)
        if hasattr(value, "resolve_expression"):
            return None
        values.append(field.get_db_prep_save(value, connection))
    return columns, values


def typed_placeholder(field: models.Field[Any, Any], connection: BaseDatabaseWrapper) -> str:
    """The placeholder of a value of ``field`` in an ``INSERT … SELECT`` list: on PostgreSQL ``%s`` cast
    to the column's type, since a value bound on the server there (:func:`statement_cursor`) is read
    as text; a character column's (text is assigned to it as it is) and SQLite's: ``%s``."""
    if connection.vendor != "postgresql":
        return "%s"
    db_type = field.cast_db_type(connection) or "text"
    return "%s" if db_type.startswith(("varchar", "text", "char")) else f"%s::{db_type}"


# A step builds its record's statement anew each time; a model's columns and their types are the same
# every time. An empty tuple stands for a model whose rows the ORM inserts itself.
_INSERT_COLUMNS: LruCache[tuple[type[models.Model], str], InsertColumns | tuple[()]] = cache_register(
    LruCache(256),
    name="insert_columns",
    key="model, database vendor",
    invalidation="nothing: a model's fields and their column types are fixed while the process runs",
)


def statement_cursor(connection: BaseDatabaseWrapper) -> CursorWrapper:
    """``connection.cursor()``, except on PostgreSQL with a ``prepare_threshold`` in the database's
    options (``DATABASE_PREPARED_STATEMENTS``): a cursor whose values the server binds, so that psycopg
    prepares a statement once the connection has run it that many times, and the server parses and
    plans it once per connection instead of at every execution. For the statements a step runs at every
    step; the ORM's cursors bind on the client and are never prepared.

    A value bound on the server is typed by where the statement uses it; one the statement does not
    type (in a ``SELECT`` list, an ``INSERT … SELECT``'s values) is read as text, so such a value is
    cast to its column's type (:func:`typed_placeholder`). The cursor is Django's wrapper, so the
    connection's execute wrappers, its query log and its error translation apply as to any other."""
    if (
        connection.vendor != "postgresql"
        or connection.settings_dict["OPTIONS"].get("prepare_threshold") is None
    ):
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    server_bound: Any = psycopg.Cursor(connection.connection)  # django-stubs type the wrapped cursor loosely
    if connection.queries_logged:
        return connection.make_debug_cursor(server_bound)
    return connection.make_cursor(server_bound)


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
    """Each of ``rows`` as :func:`converted_row` converts one, the converters looked up once per
    connection and fields (:func:`_row_converters`)."""
    if not isinstance(connection, BaseDatabaseWrapper):  # django.db.connection, a proxy, is no key
        connection = connections[alias]
    compiler, converters = _row_converters(connection, alias, tuple(fields))
    return iter(compiler.apply_converters(rows, converters))


@functools.lru_cache(maxsize=1024)
def _row_converters(
    connection: BaseDatabaseWrapper, alias: str, fields: tuple[models.Field[Any, Any], ...]
) -> tuple[Any, dict[int, tuple[list[Any], Any]]]:
    """A compiler on ``connection`` and its converters for ``fields``: looking them up cost more than
    the claim's statement itself (about 0.2 ms for a run's columns), at every step. A connection
    object belongs to one thread and lives as long as it (the pool swaps the database connection
    under it), so a worker holds an entry per thread and set of fields read."""
    compiler = connection.ops.compiler("SQLCompiler")(Query(None), connection, alias)
    return compiler, compiler.get_converters([field.get_col(field.model._meta.db_table) for field in fields])


cache_register(
    _row_converters,
    name="row_converters",
    key="connection (one per thread), database alias, the fields read",
    invalidation="nothing: a field's converters depend on its class and the database backend only",
)
