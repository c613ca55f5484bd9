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

With ``FLOOR_DURABLE=1`` it is the durable floor: each step also writes what any runtime that
survives a crash without repeating a model call must write, on PostgreSQL through a pool of 16
connections per process (as the service's recommended settings), a connection held only for its
statement: before the call, the step's claim (one ``INSERT … ON CONFLICT DO NOTHING RETURNING``: a
task delivered again finds its claim and does not call twice); after it, the reply (one ``INSERT``).
Nothing else: no assembly, governance, labels, receipts, log or lease; its share bounds what the
service can reach with the fewest writes a crash-safe step needs.

Not a benchmark itself (the Makefile runs only ``bench/[a-z]*.py``). Started by ``bench/concurrency.py``
as ``celery -A bench._floor_worker worker`` and configured by the environment: ``FLOOR_BROKER_URL``,
``FLOOR_PROVIDER_URL`` (the fake's OpenAI base URL), ``FLOOR_BODIES`` (a JSON file: the request
body of each step index), and for the durable floor ``FLOOR_DURABLE=1`` with ``DATABASE_URL`` (the
tables of :data:`DURABLE_TABLES` created beforehand).
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
DURABLE_TABLES = (
    "CREATE TABLE IF NOT EXISTS floor_claim (run integer, index integer, PRIMARY KEY (run, index))",
    "CREATE TABLE IF NOT EXISTS floor_reply (run integer, index integer, reply text, PRIMARY KEY (run, index))",
)
CLAIM = "INSERT INTO floor_claim (run, index) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING 1"
RECORD = "INSERT INTO floor_reply (run, index, reply) VALUES (%s, %s, %s)"

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
_pool: Any = None  # the durable floor's psycopg_pool.ConnectionPool


def _durable_pool() -> Any:
    """The durable floor's pool (None for the bare floor): 16 connections, in autocommit."""
    global _pool
    if os.environ.get("FLOOR_DURABLE") != "1":
        return None
    with _lock:
        if _pool is None:
            from psycopg_pool import ConnectionPool

            url = os.environ["DATABASE_URL"]
            _pool = ConnectionPool(url, min_size=2, max_size=16, kwargs={"autocommit": True}, open=True)
        return _pool


def _setup() -> tuple[openai.OpenAI, list[dict[str, Any]], redis.Redis]:
    """One SDK client (and its connection pool) per process, as the service's adapter pool keeps."""
    global _client, _bodies, _redis
    with _lock:
        if _client is None:
            _bodies = json.loads(Path(os.environ["FLOOR_BODIES"]).read_text())
            # 256 threads count at once: redis-py's pool refuses a 101st connection by default
            _redis = redis.Redis.from_url(app.conf.broker_url, max_connections=10_000)
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
    pool = _durable_pool()
    if pool is not None:
        with pool.connection() as conn:
            if conn.execute(CLAIM, (run, index)).fetchone() is None:
                store.hincrby(FAILURES, "claimed before")  # a redelivered task: its call was made
                return
    for attempt in range(1 + RETRIES):
        try:
            text, calls = _call(client, bodies[index])
            break
        except (openai.APIError, httpx.HTTPError) as error:  # a dropped connection: the service retries it
            store.hincrby(FAILURES, type(error).__name__)
            if attempt == RETRIES:
                store.incr(WRONG)
                return
    if pool is not None:
        with pool.connection() as conn:
            conn.execute(RECORD, (run, index, text))
    last = index == len(bodies) - 1
    if (last and text != ANSWER) or (not last and calls == 0):
        store.incr(WRONG)
    if not last:
        step.apply_async((run, index + 1), queue=QUEUE)
        return
    with store.pipeline() as pipe:
        pipe.incr(DONE).set(LAST, repr(time.time())).execute()
