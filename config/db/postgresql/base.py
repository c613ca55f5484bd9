"""Django's PostgreSQL backend, except that the pool takes ``check`` from ``OPTIONS["pool"]``
(docs/decisions/0009-connection-pool-and-slow-steps.md; selected by config/settings/storage.py whenever
``DATABASE_POOL`` is on), and that a query log shows a statement psycopg ran prepared by its text
(:class:`DatabaseOperations`).

Upstream limit: Django 5.2 builds the psycopg pool with its own ``check=`` beside ``**OPTIONS["pool"]``,
so a ``check`` in the options raises ``TypeError`` (multiple values for one keyword). Django's main
branch takes the option's ``check`` first; once the project's Django release does, this backend goes
and ``ENGINE`` is Django's again, the settings unchanged. Until then this class builds the pool as
Django does, keeps it in its own registry (not Django's private one) and closes it in
:meth:`close_pool`. Django offers no public way to configure a pooled connection, so the pool's
``configure`` is still Django's private ``_configure_connection`` (listed with this reason in
tests/config/test_public_apis.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base as postgresql
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresqlOperations
from psycopg_pool import ConnectionPool


class DatabaseOperations(PostgresqlOperations):
    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str:
        """As Django's, except for a statement psycopg ran prepared (catalog/models/sql.py,
        ``statement_cursor``), which keeps no text of its own: its SQL as it was passed, with its
        placeholders, so that query logs show it."""
        executed: str | None = super().last_executed_query(cursor, sql, params)
        return sql if executed is None else executed


class DatabaseWrapper(postgresql.DatabaseWrapper):
    ops_class = DatabaseOperations
    pools: ClassVar[dict[str, ConnectionPool[Any]]] = {}  # one per alias and process, as Django's

    @property
    def pool(self) -> ConnectionPool[Any] | None:  # type: ignore[override]
        options = self.settings_dict["OPTIONS"].get("pool")
        if self.alias == NO_DB_ALIAS or not isinstance(options, dict) or "check" not in options:
            return super().pool  # type: ignore[no-any-return]
        pool = self.pools.get(self.alias)
        if pool is not None:
            return pool
        if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
            raise ImproperlyConfigured("Pooling doesn't support persistent connections.")
        connect_kwargs = self.get_connection_params()
        connect_kwargs["autocommit"] = True  # Django sets the connection's own mode later
        built = ConnectionPool(
            kwargs=connect_kwargs,
            open=False,
            configure=self._configure_connection,  # type: ignore[attr-defined]
            **options,
        )
        # As Django's: at worst several threads build a pool at start-up, and the first one set wins.
        return self.pools.setdefault(self.alias, built)

    def close_pool(self) -> None:
        pool = self.pools.pop(self.alias, None)
        if pool is None:
            super().close_pool()
        else:
            pool.close()
