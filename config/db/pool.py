"""The pool's check (docs/decisions/0009-connection-pool-and-slow-steps.md), set in the settings as
``DATABASES["default"]["OPTIONS"]["pool"]["check"]``, psycopg_pool's documented ``check`` callback.

Django's own check (``ConnectionPool.check_connection``, one empty query before a connection is
handed out) alone finds the dead connections of a restart or a failover one checkout at a time, and
psycopg backs off between failed checks of one checkout (0 s, 1 s, 2 s, 4 s, …) until the pool's
timeout: with a pool full of dead idle connections, threads wait up to
``DATABASE_POOL_TIMEOUT_SECONDS`` and fail with ``PoolTimeout`` although the server is back.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg_pool import ConnectionPool


def check_or_sweep(conn: psycopg.Connection[Any]) -> None:
    """An empty query; when it fails, first check (and replace) every idle connection of the pool at
    once (``ConnectionPool.check``: the broken ones are dropped and new ones opened by the pool's
    background workers), since what killed this one most likely killed them too, then fail. psycopg
    retries a first failed check without a pause, and the retry gets a fresh connection.

    The project has one database, so the pool is the default alias's. Costs nothing while the check
    passes; one empty query per idle connection after a failed one."""
    try:
        ConnectionPool.check_connection(conn)
    except Exception:
        pool = getattr(connections[DEFAULT_DB_ALIAS], "pool", None)
        if isinstance(pool, ConnectionPool):
            pool.check()
        raise
