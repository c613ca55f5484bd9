"""The floor peer of ``bench/concurrency.py``: a step's provider call with nothing of the service
around it.

A Celery task replays the request body a real step sent (recorded by the fake during the pooled
setting) through the official ``openai`` SDK on the same lean path as the service's adapter (the
client's generic ``post`` with a stream of decoded JSON chunks, no TypedDict transform, no pydantic
model per chunk), reads the reply to its end and enqueues the run's next step; a run's last step
counts the run done in Redis. The app's Celery settings are the service's (late acknowledgement, a
prefetch of one). No Django, no database, no assembly, governance, fit or record: what is left is the
part of a step's CPU that any implementation on Celery and the official SDK pays, so its share of the
slot ceiling bounds what the service can reach on the same machine.

Not a benchmark itself (the Makefile runs only ``bench/[a-z]*.py``). Started by ``bench/concurrency.py``
as ``celery -A bench._floor_worker worker`` and configured by the environment: ``FLOOR_BROKER_URL``,
``FLOOR_PROVIDER_URL`` (the fake's OpenAI base URL) and ``FLOOR_BODIES`` (a JSON file: the request
body of each step index).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import redis
from celery import Celery
from openai.types.chat import ChatCompletion

QUEUE = "bench-floor"
TASK = "bench.floor.step"
DONE = "bench:floor:done"  # runs whose last step read the expected answer
WRONG = "bench:floor:wrong"  # steps whose reply was not the expected one
LAST = "bench:floor:last"  # time.time() of the latest run done
FAILURES = "bench:floor:failures"  # failed calls by exception class (retried, as the service does) and
# steps that failed otherwise ("unexpected <class>")
RETRIES = 2  # a provider's default max_retries in the service
ANSWER = "Done."

app = Celery("bench-floor", broker=os.environ.get("FLOOR_BROKER_URL", "redis://127.0.0.1:6379/15"))
app.conf.update(
    task_default_queue=QUEUE,
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
)

_lock = threading.Lock()
_client: openai.OpenAI | None = None
_bodies: list[dict[str, Any]] = []
_redis: redis.Redis | None = None


def _setup() -> tuple[openai.OpenAI, list[dict[str, Any]], redis.Redis]:
    """One SDK client (and its connection pool) per process, as the service's adapter pool keeps."""
    global _client, _bodies, _redis
    with _lock:
        if _client is None:
            _bodies = json.loads(Path(os.environ["FLOOR_BODIES"]).read_text())
            _redis = redis.Redis.from_url(app.conf.broker_url)
            _client = openai.OpenAI(base_url=os.environ["FLOOR_PROVIDER_URL"], api_key="floor", max_retries=0)
        assert _redis is not None
        return _client, _bodies, _redis


def _call(client: openai.OpenAI, body: dict[str, Any]) -> tuple[str, int]:
    """One streamed call: the reply's text and how many tool calls it opened."""
    text: list[str] = []
    calls = 0
    stream: openai.Stream[Any] = client.post(
        "/chat/completions",
        body=body,
        cast_to=ChatCompletion,
        options={"security": {"bearer_auth": True}},
        stream=True,
        stream_cls=openai.Stream[Any],
    )
    for chunk in stream:
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            calls += len(delta.get("tool_calls") or ())
    return "".join(text), calls


@app.task(name=TASK)
def step(run: int, index: int) -> None:
    client, bodies, store = _setup()
    try:
        _step(client, bodies, store, run, index)
    except Exception as error:  # counted for the benchmark's report, then failed as Celery fails a task
        store.hincrby(FAILURES, f"unexpected {type(error).__name__}")
        raise


def _step(
    client: openai.OpenAI, bodies: list[dict[str, Any]], store: redis.Redis, run: int, index: int
) -> None:
    for attempt in range(1 + RETRIES):
        try:
            text, calls = _call(client, bodies[index])
            break
        except (openai.APIError, httpx.HTTPError) as error:  # a dropped connection: the service retries it
            store.hincrby(FAILURES, type(error).__name__)
            if attempt == RETRIES:
                store.incr(WRONG)
                return
    last = index == len(bodies) - 1
    if (last and text != ANSWER) or (not last and calls == 0):
        store.incr(WRONG)
    if not last:
        step.apply_async((run, index + 1), queue=QUEUE)
        return
    with store.pipeline() as pipe:
        pipe.incr(DONE).set(LAST, repr(time.time())).execute()
