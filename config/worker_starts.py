"""When each Celery worker started, and how many times a worker of its node name had started before:
what ``/healthz`` adds to a worker's ping answer (``config/health.py``), so that a worker started
again after it died (``deploy/keep-running``, systemd's ``Restart=``, an orchestrator) shows as such.

A worker records its start as it becomes ready to take tasks (Celery's ``worker_ready``, connected in
``config/celery.py``), in the cache every process shares (Redis in the real mode), one key per node
name, kept until replaced. A node name is unique among running workers (``-n worker.N@%h``), and the
same across its restarts; ``restarts`` counts every start after the first the cache remembers, a
deliberate stop and start as much as a crash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.core.cache import cache
from django.utils import timezone


def _key(node: str) -> str:
    return f"config:worker_start:{node}"


@dataclass(frozen=True)
class WorkerStart:
    started_at: datetime
    restarts: int

    def as_json(self) -> dict[str, str | int]:
        return {"started_at": self.started_at.isoformat(), "restarts": self.restarts}


def worker_start_record(node: str) -> WorkerStart:
    """Note that the worker ``node`` started now. Read, then written: two workers never share a node
    name at once, so no other process writes this key meanwhile."""
    previous = cache.get(_key(node))
    start = WorkerStart(timezone.now(), 0 if previous is None else int(previous["restarts"]) + 1)
    cache.set(_key(node), {"started_at": start.started_at.timestamp(), "restarts": start.restarts}, None)
    return start


def worker_starts(nodes: Iterable[str]) -> dict[str, WorkerStart | None]:
    """The last recorded start of each node (``None``: none recorded, as for a worker older than this
    record). One cache round trip."""
    nodes = list(nodes)
    found = cache.get_many([_key(node) for node in nodes])
    starts: dict[str, WorkerStart | None] = {}
    for node in nodes:
        record = found.get(_key(node))
        starts[node] = (
            None
            if record is None
            else WorkerStart(
                datetime.fromtimestamp(float(record["started_at"]), tz=UTC), int(record["restarts"])
            )
        )
    return starts
