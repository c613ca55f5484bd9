"""The one bounded least-recently-used map behind every per-process cache, with hit and miss counts.

Every module-level cache of the project is an :class:`LruCache` registered in :mod:`config.caches`
with its key and what invalidates it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, KeysView
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    size: int
    max_entries: int


class LruCache(Generic[K, V]):
    """At most ``max_entries`` values (0 stores nothing: every read misses and builds anew); the
    least recently used goes first.
    Thread-safe. ``None`` is never stored (:meth:`get` answers it for a miss).

    A value evicted, replaced, cleared or built twice by racing threads is handed to ``on_evict``
    (outside the lock), so values that hold resources (a connection pool) are closed, never leaked.
    :meth:`get_or_build` builds outside the lock: two threads may build the same value; the first
    stored wins and both callers get it.
    """

    def __init__(self, max_entries: int, *, on_evict: Callable[[V], None] | None = None) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError("max_entries must be a non-negative integer")
        self.max_entries = max_entries
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._on_evict = on_evict
        self._hits = 0
        self._misses = 0
        # The stored value or None, without the lock, without marking it used and without counting:
        # for a membership test on a path that asks thousands of times per call (a dict read is atomic
        # under the GIL). Entries only ever read this way leave in the order they came. The dict's own
        # bound method, so a look-up costs no Python call of ours.
        self.peek: Callable[[K], V | None] = self._entries.get

    def get(self, key: K) -> V | None:
        """The stored value (marking it most recently used), or None. Counts a hit or a miss.

        Without the lock: the look-up and the move to the end are each one call of the C-level
        ``OrderedDict`` (atomic under the interpreter lock), and a key another thread evicted between
        the two is simply not moved. The lock cost more than the rest of a read, and a request reads
        a few hundred times (four memos per message of a conversation). Counts are diagnostics:
        threads racing on one cache may lose an increment."""
        entries = self._entries
        value = entries.get(key)
        if value is None:
            self._misses += 1
            return None
        try:  # noqa: SIM105  (contextlib.suppress would build a context manager at every read)
            entries.move_to_end(key)
        except KeyError:  # evicted or cleared by another thread just now: it was a hit all the same
            pass
        self._hits += 1
        return value

    def keys(self) -> KeysView[K]:
        """A live view of the stored keys, read like :attr:`peek`: without the lock, recency or counts
        (a membership test in it is one C-level dict look-up)."""
        return self._entries.keys()

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key`` (replacing any), evicting beyond ``max_entries``."""
        if self.max_entries == 0:
            return
        with self._lock:
            replaced = self._entries.get(key)
            self._entries[key] = value
            self._entries.move_to_end(key)
            dropped = self._overflow()
        if replaced is not None and replaced is not value:
            dropped.append(replaced)
        self._evicted(dropped)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The stored value, else ``build()`` stored and returned (see the class docstring)."""
        value = self.get(key)
        if value is not None:
            return value
        return self.put_absent(key, build())

    def put_absent(self, key: K, built: V) -> V:
        """``built`` stored unless a value is stored under ``key`` already (another thread built it
        first): the stored value, which the caller uses instead. For a caller that has just missed
        :meth:`get` and built the value; counts nothing (the miss was counted)."""
        if self.max_entries == 0:
            return built
        with self._lock:
            existing = self._entries.get(key)
            if existing is None:
                self._entries[key] = built
                dropped = self._overflow()
            else:
                dropped = [built]
        self._evicted(dropped)
        return built if existing is None else existing

    def clear(self) -> None:
        """Drop every value and reset the counts."""
        with self._lock:
            dropped = list(self._entries.values())
            self._entries.clear()
            self._hits = self._misses = 0
        self._evicted(dropped)

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._entries), self.max_entries)

    @property
    def hits(self) -> int:
        return self._hits

    @property
    def misses(self) -> int:
        return self._misses

    @property
    def size(self) -> int:
        return len(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def _overflow(self) -> list[V]:
        dropped = []
        while len(self._entries) > self.max_entries:
            dropped.append(self._entries.popitem(last=False)[1])
        return dropped

    def _evicted(self, values: list[V]) -> None:
        if self._on_evict is not None:
            for value in values:
                self._on_evict(value)
