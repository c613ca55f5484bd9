"""PostgreSQL backend whose connection pool recovers at once when the server drops its connections
(docs/decisions/0009-connection-pool-and-slow-steps.md; selected by config/settings/base.py whenever
``DATABASE_POOL`` is on).

Django's backend builds the psycopg pool with its own ``check`` (``ConnectionPool.check_connection``,
one empty query before a connection is handed out) and passes ``OPTIONS["pool"]`` beside it, so no
other ``check`` can be configured. That check alone finds the dead connections of a restart or a
failover one checkout at a time, and psycopg backs off between failed checks (0 s, 1 s, 2 s, 4 s, …)
until the pool's timeout: with a full pool of dead idle connections, threads wait up to
``DATABASE_POOL_TIMEOUT_SECONDS`` and fail with ``PoolTimeout`` although the server is back.

Here the pool is a :class:`RecoveringConnectionPool`: its check, on the first failure, checks every
idle connection of the pool at once (``ConnectionPool.check``: the broken ones are dropped and new
ones are opened in the pool's background workers) and then fails the connection in hand, which the
pool drops too. The thread's next try, which psycopg makes without a pause after a first failure, gets
a fresh connection. Everything else is Django's backend unchanged.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base as postgresql
from psycopg_pool import ConnectionPool


class RecoveringConnectionPool(ConnectionPool[psycopg.Connection[Any]]):
    """A psycopg pool whose every checkout is checked, and where a failed check sweeps the pool."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(check=self.check_or_sweep, **kwargs)

    def check_or_sweep(self, conn: psycopg.Connection[Any]) -> None:
        """The pool's ``check``: an empty query; when it fails, first check (and replace) all the idle
        connections, since what killed this one most likely killed them too, then fail."""
        try:
            self.check_connection(conn)
        except Exception:
            self.check()
            raise


class DatabaseWrapper(postgresql.DatabaseWrapper):
    @property
    def pool(self) -> ConnectionPool[Any] | None:  # type: ignore[override]
        pools: dict[str, ConnectionPool[Any]] = self._connection_pools  # type: ignore[attr-defined]
        pool_options = self.settings_dict["OPTIONS"].get("pool")
        if (
            self.alias in pools
            or self.alias == NO_DB_ALIAS
            or not pool_options
            or not self.settings_dict["CONN_HEALTH_CHECKS"]
        ):
            return super().pool  # type: ignore[no-any-return]
        # Django's own construction (django/db/backends/postgresql/base.py), but for the pool's class.
        if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
            raise ImproperlyConfigured("Pooling doesn't support persistent connections.")
        connect_kwargs = self.get_connection_params()
        connect_kwargs["autocommit"] = True  # Django sets the connection's own mode later
        pool = RecoveringConnectionPool(
            kwargs=connect_kwargs,
            open=False,
            configure=self._configure_connection,  # type: ignore[attr-defined]
            **({} if pool_options is True else pool_options),
        )
        # As Django's: at worst several threads build a pool at start-up, and the first one set wins.
        return pools.setdefault(self.alias, pool)
