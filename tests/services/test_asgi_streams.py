"""Streams under the production server: uvicorn serving ``config.asgi`` on PostgreSQL and Redis.

Run event streams are sent as they are produced (the first bytes arrive long before the stream ends),
live events published through Redis reach a reader in the server process, and a stream that waits
holds no database connection (counted in ``pg_stat_activity`` while the streams are open).
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from django.conf import settings
from django.db import connection

from agents.runtime.live import live_publish
from agents.services import run_create
from catalog.services import api_client_create
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import FakeProvider
from tests.services.worker import ROOT, stop, wait_for, worker_env

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

STREAMS = 20
STREAM_SECONDS = 8


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    yield
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    with (tmp_path / "uvicorn.log").open("w") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--port",
                str(port),
                "--no-access-log",
            ],
            cwd=ROOT,
            # Without the pool a connection is a backend while it is held, so pg_stat_activity shows
            # exactly what the streams hold (a pool keeps idle backends open for the next request).
            env=worker_env(DATABASE_POOL="false"),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: _answers(base), timeout=60, what="uvicorn to answer")
            yield base
        finally:
            stop(process)


def _answers(base: str) -> bool:
    # A bare TCP connect: a request would open a database connection the test then counts.
    host, port = base.removeprefix("http://").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return False
    return True


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def server_backends(exclude: int) -> int:
    """Connections to the test database other than this test's own two."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND pid <> %s",
            [exclude],
        )
        return int(cursor.fetchone()[0])


async def read_stream(
    client: httpx.AsyncClient, path: str, token: str, seen: dict[str, float], ended: dict[str, float]
) -> str:
    body = []
    async with client.stream(
        "GET", path, params={"timeout": STREAM_SECONDS}, headers={"Authorization": f"Bearer {token}"}
    ) as response:
        assert response.status_code == 200
        async for chunk in response.aiter_text():
            seen.setdefault(path, time.monotonic())
            body.append(chunk)
    ended[path] = time.monotonic()
    return "".join(body)


def test_streams_arrive_as_produced_and_hold_no_database_connection_while_waiting(server):
    with FakeProvider() as fake:
        configuration = fake_configuration(fake)
    issued = api_client_create(
        name="asgi-streams", scopes=["runs:read", "runs:create"], configurations=[configuration]
    )
    runs = [
        run_create(configuration=configuration, input_text="wait", api_client=issued.client)
        for _ in range(STREAMS)
    ]
    samples: list[int] = []
    done = threading.Event()
    test_backend = backend_pid()

    def sample() -> None:
        while not done.is_set():
            samples.append(server_backends(test_backend))
            time.sleep(0.05)
        connection.close()

    first_bytes: dict[str, float] = {}
    ends: dict[str, float] = {}
    published: list[float] = []

    async def main() -> list[str]:
        limits = httpx.Limits(max_connections=None)
        async with httpx.AsyncClient(base_url=server, timeout=30, limits=limits) as client:
            tasks = [
                asyncio.create_task(
                    read_stream(client, f"/api/v1/runs/{run.id}/events", issued.token, first_bytes, ends)
                )
                for run in runs
            ]
            deadline = time.monotonic() + STREAM_SECONDS / 2
            while len(first_bytes) < STREAMS and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            published.append(time.monotonic())
            live_publish(str(runs[0].id), "delta", {"step": 0, "text": "live through Redis"})
            return await asyncio.gather(*tasks)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        bodies = asyncio.run(main())
    finally:
        done.set()
        sampler.join()
    assert all(body.endswith("\n\n") and "event: timeout" in body for body in bodies)
    assert 'event: delta\ndata: {"step":0,"text":"live through Redis"}' in bodies[0]
    assert all("event: delta" not in body for body in bodies[1:])
    # Every stream's first bytes came before the live event was published, and every stream ended
    # after it (with its timeout event): nothing was buffered to the end.
    assert len(first_bytes) == STREAMS
    assert all(first_bytes[path] < published[0] < ends[path] for path in first_bytes)
    # A stream opens with the request's connection and each poll takes one briefly; a stream waiting
    # between polls holds none. Held while waiting, every sample would count all the streams.
    assert len(samples) > 20
    assert statistics.median(samples) < STREAMS / 2
