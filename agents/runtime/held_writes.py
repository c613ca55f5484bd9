"""Rows a step writes only while its worker holds the run's lease: a tool call's claim and its result.

Each is written after the lease check, in the same transaction (:func:`agents.runtime.leases.lease_hold`,
docs/decisions/0029-short-renewed-leases.md). On PostgreSQL that transaction is one statement,
``WITH held AS (UPDATE <run> … RETURNING 1) INSERT INTO <table> (…) SELECT … FROM held``: the update
renews the lease and locks the run's row, and the row is inserted only if the update found the lease
still held, both in the statement's own transaction. Four round trips (``BEGIN``, the update, the
insert, ``COMMIT``) become one, and the insert is SQL text built from the model's fields as the ORM
builds it (``pre_save``, then ``get_db_prep_save``), since compiling the ORM's insert cost more than
running it (``catalog/models/sql.py``). SQLite has no data-modifying ``WITH``: there the same two
statements run in one transaction. The step's own rows, written in its record's transaction after the
lease check (its step row and assistant message), are inserted the same way
(``catalog/models/sql.py``, ``row_inserted``).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from django.db import connections, models, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from agents.runtime.leases import HeldLease, LeaseLost, held_update_sql, lease_expiry, lease_hold
from catalog.models.sql import has_save_receivers, insert_parts


def held_insert(held: HeldLease, model: type[models.Model], **fields: Any) -> None:
    """Insert a ``model`` row of ``fields`` if ``held``'s worker still holds the run's lease at its
    step (renewing the lease), else raise :class:`LeaseLost`, inserting nothing. An ``IntegrityError``
    (a unique constraint) propagates with nothing written; inside an outer transaction the write is a
    savepoint, which keeps that transaction usable after it."""
    instance = model(**fields)
    alias = router.db_for_write(model)
    connection = connections[alias]
    statement = _one_statement(held, instance, connection) if connection.vendor == "postgresql" else None
    if statement is None:
        with transaction.atomic(using=alias):
            lease_hold(held)
            instance.save(force_insert=True, using=alias)
        return
    sql, params = statement
    savepoint = transaction.atomic(using=alias) if connection.in_atomic_block else nullcontext()
    with savepoint, connection.cursor() as cursor:
        cursor.execute(sql, params)
        inserted = cursor.rowcount
    if not inserted:
        raise LeaseLost(f"run {held.run_id} step {held.step_index} is no longer leased by this worker")


def _one_statement(
    held: HeldLease, instance: models.Model, connection: BaseDatabaseWrapper
) -> tuple[str, list[Any]] | None:
    """The lease check and the insert as one statement; None for a row the ORM would insert with SQL
    of its own, which then takes the transaction's path."""
    parts = None if has_save_receivers(type(instance)) else insert_parts(instance, connection)
    if parts is None:
        return None
    table, columns, values = parts
    update, params = held_update_sql(held, {"lease_expires_at": lease_expiry()}, connection)
    sql = (
        f"WITH held AS ({update} RETURNING 1) "
        f"INSERT INTO {table.name} ({', '.join(columns)}) SELECT {', '.join(['%s'] * len(values))} FROM held"
    )
    return sql, [*params, *values]
