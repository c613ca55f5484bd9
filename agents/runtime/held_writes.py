"""Rows a step writes only while its worker holds the run's lease: a tool call's claim and its result,
and the record of a completed step (its step row, its assistant message, the run's totals and the
serving model's calibration: ``agents/runtime/record.py``).

Each is written after the lease check, in the same transaction (:func:`agents.runtime.leases.lease_hold`,
docs/decisions/0029-short-renewed-leases.md). On PostgreSQL that transaction is one statement
(:func:`held_rows_written`), ``WITH held AS (UPDATE <run> … RETURNING 1), row0 AS (INSERT INTO <table>
(…) SELECT … FROM held) … SELECT …``: the update renews the lease (or, for a step's record, adds its
totals and renews the lease or completes the run) and locks the run's row, and the rows are written
only if the update found the lease still held, all in the statement's own transaction. Four round
trips for a tool call (``BEGIN``, the update, the insert, ``COMMIT``) become one, six for a step's
record; each insert is SQL text built from the model's fields as the ORM builds it (``pre_save``,
then ``get_db_prep_save``), since compiling the ORM's insert cost more than running it
(``catalog/models/sql.py``). SQLite has no data-modifying ``WITH``: there the same statements run in
one transaction, the lease check first (the rows inserted with ``row_inserted``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import date
from decimal import Decimal
from typing import Any, TypeVar

from django.db import connections, models, router, transaction

from agents.runtime.leases import HeldLease, LeaseLost, held_update_sql, lease_expiry, lease_hold
from catalog.models.sql import executed, has_save_receivers, insert_parts, row_saved, statement_cursor
from config.caches import cache_register
from config.lru import LruCache

M = TypeVar("M", bound=models.Model)


def held_insert(
    held: HeldLease,
    model: type[M],
    *,
    then: Sequence[Statement] = (),
    run_values: dict[str, object] | None = None,
    **fields: Any,
) -> M:
    """Insert a ``model`` row of ``fields`` and run each ``UPDATE`` of ``then`` (as
    :func:`held_rows_written` takes them) if ``held``'s worker still holds the run's lease at its
    step, else raise :class:`LeaseLost`, writing nothing. The lease check renews the lease, or sets
    ``run_values`` on the run's row instead (as :func:`agents.runtime.leases.lease_hold` takes
    them). An ``IntegrityError`` (a unique constraint) propagates with nothing written; inside an
    outer transaction the write is a savepoint, which keeps that transaction usable after it.
    Returns the row, saved."""
    instance = model(**fields)
    alias = router.db_for_write(model)
    connection = connections[alias]
    written = None
    if connection.vendor == "postgresql":
        values: dict[str, object] = {"lease_expires_at": lease_expiry()} if run_values is None else run_values
        check = held_update_sql(held, values, connection)
        written = held_rows_written(check, [instance], alias=alias, then=then)
    if written is None:
        with transaction.atomic(using=alias):
            lease_hold(held, run_values)
            instance.save(force_insert=True, using=alias)
            with connection.cursor() as cursor:
                for statement in then:
                    executed(cursor, *statement)
        return instance
    if not written:
        raise LeaseLost(f"run {held.run_id} step {held.step_index} is no longer leased by this worker")
    return instance


Statement = tuple[str, list[Any]]


def held_rows_written(
    check: Statement, rows: Sequence[models.Model], *, alias: str, then: Sequence[Statement] = ()
) -> bool | None:
    """On PostgreSQL, as one statement: ``check`` (an ``UPDATE`` of the run's row whose ``WHERE``
    finds the lease still held: it renews, advances or ends the run), and only if it updated the row,
    the insert of each of ``rows`` (the primary keys are set on them) and each ``UPDATE`` of ``then``
    (whose text ends with a ``WHERE`` clause of conditions joined by ``AND``). True when written,
    False when the lease was not held (nothing written). An ``IntegrityError`` propagates with nothing
    written; inside an outer transaction the statement is a savepoint.

    None, with nothing run, where one statement cannot do it (SQLite; a model with save receivers; a
    row the ORM would insert with SQL of its own): the caller runs the same writes in a transaction,
    the lease check first."""
    connection = connections[alias]
    if connection.vendor != "postgresql" or any(has_save_receivers(type(row)) for row in rows):
        return None
    inserts = [insert_parts(row, connection) for row in rows]
    if any(parts is None for parts in inserts):
        return None
    sql, params = check
    ctes = [f"held AS ({sql} RETURNING 1)"]
    params = list(params)
    returned = []
    for number, parts in enumerate(inserts):
        assert parts is not None
        columns, values = parts
        ctes.append(
            f"row{number} AS (INSERT INTO {columns.table} ({columns.column_list}) "
            f"SELECT {columns.placeholder_list} FROM held RETURNING {columns.pk})"
        )
        params += values
        returned.append(f"(SELECT {columns.pk} FROM row{number})")
    for number, (update, update_params) in enumerate(then):
        ctes.append(f"then{number} AS ({update} AND EXISTS (SELECT 1 FROM held))")
        params += update_params
    sql = f"WITH {', '.join(ctes)} SELECT EXISTS (SELECT 1 FROM held){''.join(', ' + r for r in returned)}"
    statement = (sql, params) if len(params) <= PARSES_KEPT_UP_TO else distinct_parameters(sql, params)
    savepoint = transaction.atomic(using=alias) if connection.in_atomic_block else nullcontext()
    with savepoint, statement_cursor(connection) as cursor:
        row = executed(cursor, *statement).fetchone()
    if not row[0]:
        return False
    for instance, pk in zip(rows, row[1:], strict=True):
        row_saved(instance, pk, alias)
    return True


# psycopg keeps its parse of a statement's text for statements of at most this many parameters.
PARSES_KEPT_UP_TO = 50


def distinct_parameters(sql: str, params: Sequence[Any]) -> tuple[str, Sequence[Any] | dict[str, Any]]:
    """``sql`` (``%s`` placeholders, one per value of ``params``) with named placeholders instead,
    each distinct value passed once (:func:`_same_value`): the same statement, the same values.

    Why: psycopg keeps its parse of a statement's text only for statements of at most
    :data:`PARSES_KEPT_UP_TO` parameters (and 4,096 bytes); past them it parses the text again at
    every execution (about 1 M instructions for a step's record of 65-72 values). A step's record
    repeats many values (the run's id in each row, empty strings, labels, ``completed``), so its
    distinct values stay under that bound. The names follow the order of first use, so a statement
    whose values repeat the same way has the same text (psycopg keys its parse by the text). A value
    cast to a type (``%s::integer``) is merged only with the same value cast to the same type: bound
    on the server (``catalog/models/sql.py``, ``statement_cursor``), one parameter has one type. A text
    with an escaped ``%`` is returned as it is. The text's pieces between placeholders, and the cast
    after each, are found once per text (:data:`_PLACEHOLDER_PIECES`)."""
    if "%%" in sql:  # an escaped % before an s would read as a placeholder here: left as it is
        return sql, params
    pieces = _PLACEHOLDER_PIECES.peek(sql) or _PLACEHOLDER_PIECES.put_absent(sql, _pieces(sql))
    head, tail = pieces
    if len(tail) != len(params):
        raise ValueError(f"{len(tail)} placeholders for {len(params)} parameters")
    names: dict[object, str] = {}
    named: dict[str, Any] = {}
    text = [head]
    for value, (chunk, cast) in zip(params, tail, strict=True):
        key = _same_value(value)
        if key is not None and cast is not None:  # a value cast to a type is merged only with the same cast
            key = (key, cast)
        name = names.get(key) if key is not None else None
        if name is None:
            name = f"v{len(named)}"
            named[name] = value
            if key is not None:
                names[key] = name
        text += ("%(", name, ")s", chunk)
    return "".join(text), named


def _pieces(sql: str) -> tuple[str, tuple[tuple[str, str | None], ...]]:
    """``sql``'s text before its first ``%s``, then for each placeholder the text after it up to the
    next, with the type it is cast to there (``%s::integer``), or None."""
    head, *chunks = sql.split("%s")
    return head, tuple((chunk, cast.group(1) if (cast := _CAST.match(chunk)) else None) for chunk in chunks)


_PLACEHOLDER_PIECES: LruCache[str, tuple[str, tuple[tuple[str, str | None], ...]]] = cache_register(
    LruCache(256),
    name="placeholder_pieces",
    key="the SQL text of a step's record or a tool call's write on PostgreSQL (distinct_parameters)",
    invalidation="nothing: the pieces are a pure function of the text",
)


# A cast after a placeholder, its type's name apart from its length or precision.
_CAST = re.compile(r"::(\w+(?: \w+)*)(?:\([\d, ]+\))?")


def _same_value(value: object) -> object | None:
    """A key that two values share only when psycopg writes both as the same literal: text by its
    characters (a ``TextChoices`` member is written as its value); numbers, UUIDs and dates by their
    type and value, floats, decimals and dates by their exact representation too (``0.0`` and
    ``-0.0``, ``Decimal("0")`` and ``Decimal("0.00")`` stay apart); None for a value never merged
    (JSON, and any other adapter's object)."""
    kind = type(value)
    if kind is str:  # the common case first, by its exact type
        return ("text", value)
    if value is None:
        return ("null",)
    if isinstance(value, str):
        return ("text", str.__str__(value))
    if isinstance(value, int | uuid.UUID):  # bool and psycopg's Int4 are ints: each its own type
        return (kind, value)
    if isinstance(value, float | Decimal | date):
        return (kind, repr(value))
    return None
