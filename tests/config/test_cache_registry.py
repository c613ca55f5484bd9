"""The registry of per-process caches tells the truth: each cache's owner is the module that
registered it (recorded by ``config.caches.cache_register``, not written by hand), and the table in
docs/architecture.md ("Per-process caches") lists exactly the registered caches, each with that owner
and its kind."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

import config.caches
from agents.runtime.caches import registered_caches
from config.caches import cache_register, caches_clear
from config.lru import CacheStats, LruCache

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def documented_caches() -> dict[str, tuple[str, str]]:
    """The table under "Per-process caches": cache name -> (owner, kind)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Per-process caches", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1].strip("`"), cells[2])
    return rows


def test_the_documented_table_lists_every_registered_cache_with_its_owner_and_kind():
    registered = {
        entry.name: (entry.owner_path, "LruCache" if isinstance(entry.cache, LruCache) else "functools")
        for entry in registered_caches()
    }
    assert documented_caches() == registered
    assert all(entry.key and entry.invalidation for entry in registered_caches())
    assert all(Path(ARCHITECTURE.parents[1], owner).is_file() for owner, _ in registered.values())


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as it is, in a copy that the test's own registrations leave behind."""
    monkeypatch.setattr(config.caches, "_registry", dict(config.caches._registry))


def test_the_owner_is_the_registering_module_whatever_it_claims(scratch_registry: None):
    cache = cache_register(LruCache[str, int](2), name="test_owner_probe", key="k", invalidation="i")
    entry = next(entry for entry in registered_caches() if entry.name == "test_owner_probe")
    assert (entry.owner, entry.owner_path) == (__name__, "tests/config/test_cache_registry.py")
    assert entry.cache is cache
    # Registered again from elsewhere, it keeps its first owner.
    assert cache_register(cache, name="test_owner_probe", key="k", invalidation="i") is cache
    assert next(e for e in registered_caches() if e.name == "test_owner_probe").owner == __name__


def test_a_functools_memo_registers_counts_and_clears_like_any_cache(scratch_registry: None):
    calls = []

    def square(n: int) -> int:
        calls.append(n)
        return n * n

    memo = cache_register(
        lru_cache(maxsize=8)(square), name="test_functools_probe", key="n", invalidation="i"
    )
    assert [memo(3), memo(3), memo(4)] == [9, 9, 16]
    entry = next(entry for entry in registered_caches() if entry.name == "test_functools_probe")
    assert entry.stats() == CacheStats(hits=1, misses=2, size=2, max_entries=8)
    caches_clear()
    assert entry.stats() == CacheStats(hits=0, misses=0, size=0, max_entries=8)
    assert memo(3) == 9 and calls == [3, 4, 3]
