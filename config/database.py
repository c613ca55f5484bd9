"""Database connections across long waits (docs/decisions/0009-connection-pool-and-slow-steps.md).

A step spends almost all of its time waiting on a provider (seconds), and a few milliseconds on the
database before and after. With the PostgreSQL pool (``DATABASE_POOL``, on by default), the thread
gives its connection back before such a wait and the next query takes one from the pool again, so a
worker's connections are bounded by the pool, not by its threads or by the steps in flight.

The wait must not run inside a transaction: its locks and snapshot would be held for the whole call,
and handing the connection back would roll the transaction back. :func:`connections_release` refuses
that loudly, whether or not a pool is configured.

The pool itself is psycopg's, configured by the settings (``OPTIONS["pool"]``) with a check
(config/db/pool.py) so that a restart or failover of the server costs one failed check per thread,
not one per dead connection: the first failed check tests and replaces every idle connection of the
pool at once.
"""

from __future__ import annotations

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper


class TransactionOpenAcrossWait(RuntimeError):
    """A long wait (a provider call) was about to start inside an open transaction."""


def connections_release(*, waiting_for: str) -> int:
    """Give this thread's pooled database connections back to their pool before a long wait;
    ``waiting_for`` names the wait in the error. Returns how many were given back.

    Costs a pool ``putconn`` per held connection (no round trip for an idle one); the next query
    of the thread takes a connection from the pool again. Connections that are not pooled are left
    open: closing them would cost a new backend process per step. Raises
    :class:`TransactionOpenAcrossWait` when a transaction is open on any connection of this thread,
    before anything is released or sent.
    """
    held = [wrapper for wrapper in connections.all(initialized_only=True) if wrapper.connection is not None]
    for wrapper in held:
        if transaction_open(wrapper):
            raise TransactionOpenAcrossWait(
                f"a transaction is open on database {wrapper.alias!r} while waiting for {waiting_for}: "
                "commit before the wait, so that no lock or snapshot is held through it"
            )
    released = 0
    for wrapper in held:
        # A connection inside a transaction holds its uncommitted data (closing would roll it back).
        if wrapper.settings_dict.get("OPTIONS", {}).get("pool") and not wrapper.in_atomic_block:
            wrapper.close()  # Django's close() of a pooled connection is the pool's putconn
            released += 1
    return released


def connections_close() -> None:
    """Close this thread's database connections (a pooled one goes back to its pool), except one in a
    transaction that a test holds open: a thread that ends must leave nothing open."""
    for wrapper in connections.all(initialized_only=True):
        if not wrapper.in_atomic_block:
            wrapper.close()


def transaction_open(wrapper: BaseDatabaseWrapper) -> bool:
    """Whether a transaction is open on ``wrapper``'s connection: inside ``atomic()`` (which turns
    autocommit off) or with autocommit turned off by hand."""
    return not wrapper.get_autocommit()
