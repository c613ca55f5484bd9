"""The registry of process-wide caches: each one's name, owner, key and what invalidates it.

A module that keeps a cache for the life of the process registers it with :func:`cache_register`, so
no cache exists that nobody lists. The registry records the owner itself: the module that called
:func:`cache_register` (where the cache is defined), not what a table says. A cache is an
:class:`config.lru.LruCache`, or, for a pure function of hashable arguments, the function wrapped by
``functools.lru_cache``. The registry lives here, in the lowest layer, because caches in every app
register (a lower app may not import the agents app). ``agents/runtime/caches.py`` imports every
module that registers one; docs/architecture.md ("Per-process caches") tables them, and a test
holds that table to this registry; :func:`caches_clear` empties them (the test suite does so before
every test).
"""

from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from config.lru import CacheStats, LruCache


class Memo(Protocol):
    """What ``functools.lru_cache`` adds to the function it wraps."""

    def cache_info(self) -> tuple[int, int, int | None, int]: ...  # hits, misses, maxsize, currsize

    def cache_clear(self) -> None: ...


C = TypeVar("C", bound=LruCache[Any, Any] | Memo)


@dataclass(frozen=True)
class RegisteredCache:
    name: str
    owner: str  # the module that registered it, dotted (``agents.runtime.parts``)
    key: str  # what a value is looked up by
    invalidation: str  # what makes a stored value wrong, and how it then stops being used
    cache: LruCache[Any, Any] | Memo

    @property
    def owner_path(self) -> str:
        """The owner as a file of the repository (``agents/runtime/parts.py``)."""
        return self.owner.replace(".", "/") + ".py"

    def stats(self) -> CacheStats:
        if isinstance(self.cache, LruCache):
            return self.cache.stats()
        hits, misses, maxsize, size = self.cache.cache_info()
        return CacheStats(hits=hits, misses=misses, size=size, max_entries=maxsize or 0)

    def clear(self) -> None:
        if isinstance(self.cache, LruCache):
            self.cache.clear()
        else:
            self.cache.cache_clear()


_registry: dict[str, RegisteredCache] = {}
_lock = threading.Lock()


class CacheAlreadyRegistered(ValueError):
    pass


def cache_register(cache: C, *, name: str, key: str, invalidation: str) -> C:
    """Register ``cache`` under ``name``, owned by the calling module, and return it. Two caches may
    not share a name; registering the same cache again changes nothing."""
    owner = _calling_module()
    with _lock:
        known = _registry.get(name)
        if known is not None and known.cache is not cache:
            raise CacheAlreadyRegistered(f"a cache named {name!r} is already registered")
        if known is not None:
            return cache  # registered again (a module reloaded): the first owner stays
        _registry[name] = RegisteredCache(
            name=name, owner=owner, key=key, invalidation=invalidation, cache=cache
        )
    return cache


def _calling_module() -> str:
    """The module two frames up: the one whose code called :func:`cache_register` (once per cache,
    at import)."""
    frame = inspect.currentframe()
    caller = frame.f_back.f_back if frame and frame.f_back else None
    if caller is None:
        raise RuntimeError("cache_register needs the caller's frame to record the owner")
    return str(caller.f_globals["__name__"])


def registered_caches() -> tuple[RegisteredCache, ...]:
    """Every registered cache, by name (only those of modules imported so far)."""
    with _lock:
        return tuple(sorted(_registry.values(), key=lambda entry: entry.name))


def caches_clear() -> None:
    """Empty every registered cache (values that hold resources are closed) and reset its counts."""
    for entry in registered_caches():
        entry.clear()
