"""A bounded, thread-safe least-recently-used map for per-process memos of pure results."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most ``max_entries`` values; the least recently used goes first. A value is built outside
    the lock (two threads may build the same one; the last stored wins, both are equal)."""

    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._max_entries = max_entries

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        value = self.get(key)
        if value is None:
            value = build()
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
