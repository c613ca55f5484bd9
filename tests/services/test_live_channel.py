"""A run's live events through Redis from more threads at once than redis-py's pool holds by default
(100): readers each hold a connection in their XREAD while a step publishes."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
import redis
from django.conf import settings

from agents.runtime.live import REDIS_KEY, RedisChannel

pytestmark = [pytest.mark.services]

READERS = 150


def test_more_readers_than_redis_pys_default_pool_all_get_the_published_event():
    channel = RedisChannel(settings.REDIS_URL)
    run_id = f"pool-{uuid.uuid4().hex}"
    results: list[object] = []
    lock = threading.Lock()

    def read() -> None:
        try:
            outcome: object = channel.read(run_id, None, timeout=10)
        except redis.RedisError as error:
            outcome = error
        with lock:
            results.append(outcome)

    readers = [threading.Thread(target=read) for _ in range(READERS)]
    for reader in readers:
        reader.start()
    watcher = redis.Redis.from_url(settings.REDIS_URL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(results) < READERS:
        blocked = sum(1 for client in watcher.client_list() if client.get("cmd") == "xread")
        if blocked >= READERS:
            break
        time.sleep(0.05)
    channel.publish(run_id, "delta", {"step": 0, "text": "Hello"})
    for reader in readers:
        reader.join(timeout=15)
    watcher.delete(REDIS_KEY.format(run_id=run_id))
    assert len(results) == READERS
    assert all(isinstance(result, list) for result in results), {type(r).__name__ for r in results}
    assert {(event.name, event.data["text"]) for result in results for event in result} == {
        ("delta", "Hello")
    }
    assert all(len(result) == 1 for result in results)
