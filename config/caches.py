"""The registry of process-wide caches: each one's name, key and what invalidates it.

A module that keeps a cache for the life of the process creates it with :func:`cache_register`, so
no cache exists that nobody lists. The registry lives here, in the lowest layer, because caches in
every app register (a lower app may not import the agents app). ``agents/runtime/caches.py`` imports
every module that registers one and documents them all in one table; :func:`caches_clear` empties
them (the test suite does so before every test).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, TypeVar

from config.lru import CacheStats, LruCache

C = TypeVar("C", bound=LruCache[Any, Any])


@dataclass(frozen=True)
class RegisteredCache:
    name: str
    key: str  # what a value is looked up by
    invalidation: str  # what makes a stored value wrong, and how it then stops being used
    cache: LruCache[Any, Any]

    def stats(self) -> CacheStats:
        return self.cache.stats()


_registry: dict[str, RegisteredCache] = {}
_lock = threading.Lock()


class CacheAlreadyRegistered(ValueError):
    pass


def cache_register(cache: C, *, name: str, key: str, invalidation: str) -> C:
    """Register ``cache`` under ``name`` and return it. Two caches may not share a name."""
    with _lock:
        known = _registry.get(name)
        if known is not None and known.cache is not cache:
            raise CacheAlreadyRegistered(f"a cache named {name!r} is already registered")
        _registry[name] = RegisteredCache(name=name, key=key, invalidation=invalidation, cache=cache)
    return cache


def registered_caches() -> tuple[RegisteredCache, ...]:
    """Every registered cache, by name (only those of modules imported so far)."""
    with _lock:
        return tuple(sorted(_registry.values(), key=lambda entry: entry.name))


def caches_clear() -> None:
    """Empty every registered cache (values that hold resources are closed) and reset its counts."""
    for entry in registered_caches():
        entry.cache.clear()
