"""The one LRU type: bounds, recency, hit and miss counts, and values handed back when they leave."""

from __future__ import annotations

import pytest

from config.lru import CacheStats, LruCache


class Closable:
    def __init__(self, name: str) -> None:
        self.name = name


def test_counts_hits_and_misses():
    cache: LruCache[str, int] = LruCache(4)
    assert cache.get("a") is None
    cache.put("a", 1)
    assert (cache.get("a"), cache.get("a"), cache.get("b")) == (1, 1, None)
    assert cache.stats() == CacheStats(hits=2, misses=2, size=1, max_entries=4)


def test_get_or_build_builds_once_per_key():
    cache: LruCache[str, int] = LruCache(4)
    built: list[str] = []
    for key in ("a", "a", "b", "a"):
        cache.get_or_build(key, lambda key=key: built.append(key) or len(built))
    assert built == ["a", "b"]
    assert (cache.hits, cache.misses, cache.size) == (2, 2, 2)


def test_the_least_recently_used_value_leaves_first_and_is_handed_to_on_evict():
    left: list[str] = []
    cache: LruCache[str, Closable] = LruCache(2, on_evict=lambda value: left.append(value.name))
    cache.put("a", Closable("a"))
    cache.put("b", Closable("b"))
    cache.get("a")
    cache.put("c", Closable("c"))
    assert left == ["b"]
    assert [cache.get(key) is not None for key in ("a", "b", "c")] == [True, False, True]


def test_a_replaced_value_is_handed_to_on_evict():
    left: list[str] = []
    cache: LruCache[str, Closable] = LruCache(2, on_evict=lambda value: left.append(value.name))
    cache.put("a", Closable("old"))
    cache.put("a", Closable("new"))
    assert left == ["old"]
    assert cache.get("a").name == "new"


def test_a_value_built_twice_keeps_the_first_stored_and_hands_back_the_other():
    """Two threads missed the same key and both built: the second to store gets the first's value."""
    left: list[str] = []
    cache: LruCache[str, Closable] = LruCache(2, on_evict=lambda value: left.append(value.name))
    first = Closable("first")

    def build_while_another_thread_stores() -> Closable:
        cache.put("a", first)
        return Closable("second")

    assert cache.get_or_build("a", build_while_another_thread_stores) is first
    assert left == ["second"]
    assert cache.size == 1


def test_put_absent_stores_a_value_built_after_a_miss_unless_another_was_stored_first():
    left: list[str] = []
    cache: LruCache[str, Closable] = LruCache(2, on_evict=lambda value: left.append(value.name))
    assert cache.get("a") is None
    first = Closable("first")
    assert cache.put_absent("a", first) is first
    assert cache.put_absent("a", Closable("late")) is first  # another thread's, built after the first
    assert left == ["late"]
    assert (cache.hits, cache.misses, cache.size) == (0, 1, 1)  # the miss counted once, by get
    assert LruCache[str, Closable](0).put_absent("a", first) is first


def test_clear_hands_back_every_value_and_resets_the_counts():
    left: list[str] = []
    cache: LruCache[str, Closable] = LruCache(3, on_evict=lambda value: left.append(value.name))
    for name in ("a", "b"):
        cache.put(name, Closable(name))
    cache.get("a")
    cache.get("z")
    cache.clear()
    assert sorted(left) == ["a", "b"]
    assert cache.stats() == CacheStats(hits=0, misses=0, size=0, max_entries=3)


def test_zero_entries_stores_nothing_and_hands_nothing_back():
    left: list[object] = []
    cache: LruCache[str, Closable] = LruCache(0, on_evict=left.append)
    value = cache.get_or_build("a", lambda: Closable("a"))
    cache.put("b", Closable("b"))
    assert (value.name, cache.size, left) == ("a", 0, [])


@pytest.mark.parametrize("bound", [-1, 1.5, True, "8"])
def test_the_bound_must_be_a_non_negative_integer(bound):
    with pytest.raises(ValueError):
        LruCache(bound)
