"""The live part of a run's events: the model's text as a step streams it, and its tool calls.

A step sends its model call as a stream (:func:`streamed_send`, the same governed send with the stream
as the call) and publishes, as they leave the stream's redaction, ``delta`` events (``{"step",
"text"}``) and, once the reply is whole, one ``tool_call`` event per call (``{"step", "id", "name",
"arguments"}``, redacted). ``GET runs/{id}/events`` reads them between its polls of the database
(``gateway/apis/run_events.py``).

A ``delta`` event carries the text that arrived since the last one, at most one every
:data:`DELTA_INTERVAL` seconds: a provider streams a token or a word at a time, and each publication
is a round trip to Redis from the step's thread, so a reply of five hundred pieces cost the worker
five hundred of them. The first piece goes out as it arrives; a piece that arrives sooner than that
after the last publication waits, joined with those after it, for the first piece past the interval
or for the stream's end. A reader joins the ``text`` of a step's deltas, as before.

They are a live view, not a record: the transcript stores the whole answer when the step is recorded,
and the run's final event carries it. Two channels, chosen by the deployment:

* **in-process** (no ``REDIS_URL``: the embedded default, where steps run in this process): a buffer
  per run in memory, the newest :data:`MAX_RUNS` runs kept, :data:`MAX_EVENTS` events each;
* **Redis** (``REDIS_URL``: steps run on Celery workers, readers in any web process): one Redis
  stream per run, ``govctx:run-live:<run id>``, capped at about :data:`MAX_EVENTS` entries and
  expiring :data:`TTL_SECONDS` after its last event.

A publication that fails (Redis unreachable) is logged and the step goes on: the answer is still
recorded, and the run's final event carries it; only the live view misses pieces.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from django.conf import settings

from agents.runtime.outcome import Answered, CallOutcome, Ended
from agents.runtime.send import GovernedCall
from providers.streams import TextDelta

logger = logging.getLogger(__name__)

MAX_RUNS = 256
MAX_EVENTS = 10_000
DELTA_INTERVAL = 0.1  # seconds: the most often a step publishes its text
TTL_SECONDS = 3600
REDIS_KEY = "govctx:run-live:{run_id}"


@dataclass(frozen=True)
class LiveEvent:
    """One live event; ``position`` orders a run's events (pass the last one seen to read on)."""

    position: str
    name: str
    data: dict[str, Any]


class LiveReader(Protocol):
    def read(self, run_id: str, after: str | None, timeout: float) -> list[LiveEvent]:
        """The run's events after ``after`` (None: from the first), waiting up to ``timeout``
        seconds for one when there is none yet."""
        ...


class LiveChannel(LiveReader, Protocol):
    def publish(self, run_id: str, name: str, data: dict[str, Any]) -> None: ...


class LocalChannel:
    """Live events kept in this process's memory (see the module docstring)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._runs: OrderedDict[str, list[LiveEvent]] = OrderedDict()

    def publish(self, run_id: str, name: str, data: dict[str, Any]) -> None:
        with self._changed:
            events = self._runs.setdefault(run_id, [])
            self._runs.move_to_end(run_id)
            while len(self._runs) > MAX_RUNS:
                self._runs.popitem(last=False)
            position = int(events[-1].position) + 1 if events else 1
            events.append(LiveEvent(str(position), name, data))
            del events[:-MAX_EVENTS]
            self._changed.notify_all()

    def read(self, run_id: str, after: str | None, timeout: float) -> list[LiveEvent]:
        seen = int(after) if after else 0
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                fresh = [event for event in self._runs.get(run_id, ()) if int(event.position) > seen]
                remaining = deadline - time.monotonic()
                if fresh or remaining <= 0:
                    return fresh
                self._changed.wait(remaining)

    def clear(self) -> None:
        with self._changed:
            self._runs.clear()


class RedisChannel:
    """Live events in one Redis stream per run (see the module docstring)."""

    def __init__(self, url: str) -> None:
        # A worker's threads each publish, and every reader of a run's events holds a connection in
        # its XREAD: as many as the process's threads (settings.REDIS_MAX_CONNECTIONS).
        self._client = redis.Redis.from_url(
            url, socket_connect_timeout=3, socket_timeout=30, max_connections=settings.REDIS_MAX_CONNECTIONS
        )

    def publish(self, run_id: str, name: str, data: dict[str, Any]) -> None:
        key = REDIS_KEY.format(run_id=run_id)
        pipeline = self._client.pipeline(transaction=False)
        pipeline.xadd(key, {"name": name, "data": json.dumps(data)}, maxlen=MAX_EVENTS, approximate=True)
        pipeline.expire(key, TTL_SECONDS)
        pipeline.execute()

    def read(self, run_id: str, after: str | None, timeout: float) -> list[LiveEvent]:
        key = REDIS_KEY.format(run_id=run_id)
        block = max(1, int(timeout * 1000)) if timeout > 0 else None
        answer: Any = self._client.xread({key: after or "0-0"}, count=1000, block=block)
        return [
            LiveEvent(_text(position), _text(fields[b"name"]), json.loads(fields[b"data"]))
            for _, entries in answer or ()
            for position, fields in entries
        ]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


_LOCAL = LocalChannel()
_redis_channels: dict[str, RedisChannel] = {}
_redis_lock = threading.Lock()


def live_channel() -> LiveChannel:
    """The channel of this deployment: Redis when ``REDIS_URL`` is set, else this process's memory."""
    url = settings.REDIS_URL
    if not url:
        return _LOCAL
    with _redis_lock:
        channel = _redis_channels.get(url)
        if channel is None:
            channel = _redis_channels[url] = RedisChannel(url)
        return channel


def _publish_text(run_id: str, step_index: int, pieces: list[str]) -> None:
    live_publish(run_id, "delta", {"step": step_index, "text": "".join(pieces)})


def live_publish(run_id: str, name: str, data: dict[str, Any]) -> None:
    """Publish one live event; a failure is logged, never raised (the record is the transcript)."""
    try:
        live_channel().publish(run_id, name, data)
    except redis.RedisError as exc:
        logger.warning("live event of run %s not published: %s", run_id, type(exc).__name__)


def streamed_send(call: GovernedCall, *, run_id: str, step_index: int) -> CallOutcome:
    """:meth:`~agents.runtime.send.GovernedCall.send` of a run's step with the reply streamed: the same
    outcome, and the step's live events published while the reply arrives. A stream that breaks
    after its first delta ends the call with its ``ProviderError`` (nothing is retried once text
    went out)."""
    stream = call.stream()
    if isinstance(stream, Ended):
        return stream
    outcome: CallOutcome | None = None
    held: list[str] = []  # text not published yet
    published_at = -math.inf  # the first piece goes out at once
    try:
        with stream:
            for piece in stream:
                if isinstance(piece, TextDelta):
                    held.append(piece.text)
                    now = time.monotonic()
                    if now - published_at >= DELTA_INTERVAL:
                        _publish_text(run_id, step_index, held)
                        held, published_at = [], now
                elif isinstance(piece, Answered | Ended):
                    outcome = piece
    finally:
        if held:
            _publish_text(run_id, step_index, held)
    assert outcome is not None  # a governed stream ends with the call's outcome
    if isinstance(outcome, Answered):
        for call_made in outcome.reply.tool_calls:
            data = {
                "step": step_index,
                "id": call_made.id,
                "name": call_made.name,
                "arguments": call_made.arguments,
            }
            live_publish(run_id, "tool_call", data)
    return outcome
