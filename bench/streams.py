"""Concurrent streams on the production server: N streamed chat completions at once through uvicorn,
each waiting on a provider that takes 2 s before its first byte.

Run: ``.venv/bin/python bench/streams.py [--quick] [--streams N]``. Prints a table and ends with exactly
one JSON line (``{"benchmark": "streams", ...}``). It never passes or fails on time: it exits non-zero
only when a stream did not complete with ``data: [DONE]``.

Services: ``DATABASE_URL`` (PostgreSQL; default the Makefile's ``SERVICES_DATABASE_URL``). A dedicated
database ``<name>_streams_<pid>`` is created on that server, migrated, and dropped at the end; without
PostgreSQL the benchmark is skipped (exit 0, a ``skipped`` JSON line) unless ``REQUIRE_SERVICES=1``.
The server runs the embedded task mode (no ``REDIS_URL``) with one uvicorn worker, so every figure is
one process's.

Workload: the loopback fake provider answers each request after ``LATENCY`` (2 s), then streams a short
reply. N streams (default 1,000; ``--quick`` 100) are opened in batches of 50 every 100 ms (PostgreSQL
here accepts 100 connections; each request reads its client and configuration before it streams), all
through ``POST /api/openai/v1/chat/completions`` with ``stream: true``, read to ``[DONE]``.

Figures, sampled every 100 ms from ``/proc/<uvicorn pid>/status`` and ``pg_stat_activity``: threads and
resident memory of the server process before and at peak, memory per stream ((peak - before) / N) and
per open stream (the resident memory over its start where the most streams were open at once, over
their number: the client counts the streams it has sent and not finished reading), the server's CPU
time over the batch and the wall time over (provider latency + that CPU), with the failures by kind,
database connections at peak and their median while every stream was open and waiting on the provider.

**Held streams** (a second server process, fresh, so the first batch's memory is not in its figures):
``--held`` streams (default 1,000; ``--quick`` 100) opened as above while the provider holds each
:data:`HELD_LATENCY` (12 s), longer than the server takes to take them all in, so that every one is
open and waiting at once; **memory per waiting stream** is the server's resident memory over its start
at the moment the most were waiting at the provider, over their number. The memory per open stream of
the main batch divides by the client's count at its busiest moment, which depends on how fast the
machine lets the server take streams in (the client sends 500 a second; a slower server has more of
them open, each finishing 2 s after the server reached it), and its resident memory then also holds
what streams already finished left in the allocator; the held figure has neither.
Peers in the same run: none; the figures are the server's own cost per open stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/govctx"
LATENCY = 2.0
HELD_LATENCY = 12.0
BATCH, BATCH_PAUSE = 50, 0.1
CHAT = "/api/openai/v1/chat/completions"


def _admin_dsn(database_url: str) -> str:
    return urlunsplit(urlsplit(database_url)._replace(scheme="postgresql", path="/postgres"))


def _admin_execute(database_url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(_admin_dsn(database_url), autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # the name is generated here, never user input


def postgres_problem(database_url: str) -> str | None:
    if not database_url.startswith("postgres"):
        return "DATABASE_URL does not point at PostgreSQL"
    import psycopg

    try:
        with psycopg.connect(_admin_dsn(database_url), connect_timeout=3):
            return None
    except Exception as exc:
        return f"PostgreSQL unreachable: {type(exc).__name__}"


@contextmanager
def bench_database(database_url: str, name: str) -> Iterator[str]:
    _admin_execute(database_url, f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(database_url)._replace(path=f"/{name}"))
    finally:
        from django.db import connections

        connections.close_all()
        _admin_execute(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def seed(fake_url: str) -> tuple[str, str]:
    """A configuration served by the fake and a client token allowed to use it."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from catalog.services import api_client_create
    from tests.factories import configuration_make, model_make, provider_make

    provider = provider_make(kind="openai_compatible", base_url=fake_url, timeout_seconds=30, max_retries=0)
    configuration = configuration_make(model=model_make(provider=provider, model_id="gpt-4o"))
    issued = api_client_create(
        name="streams-bench",
        scopes=["configurations:use", "runs:create", "runs:read"],
        configurations=[configuration],
    )
    return configuration.identifier, issued.token


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def uvicorn(database_url: str, port: int, log: Path) -> Iterator[subprocess.Popen]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DJANGO_SECRET_KEY": "bench-only-" + str(os.getpid()),
        "DATABASE_URL": database_url,
        "API_RATE_LIMIT": "1000000/min",
    }
    env.pop("REDIS_URL", None)
    with log.open("w") as output:
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
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
            yield process
        finally:
            process.terminate()
            process.wait(timeout=30)


def proc_status(pid: int) -> tuple[int, int]:
    """(threads, resident kB) of ``pid``."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def db_connections(dsn: str) -> int:
    import psycopg

    with psycopg.connect(_admin_dsn(dsn), connect_timeout=3) as conn:
        name = urlsplit(dsn).path.lstrip("/")
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [name]).fetchone()
        return int(row[0]) if row else 0


OPEN = [0]  # streams the client has sent and not finished reading, read by the sampler


async def one_stream(client: Any, configuration: str, token: str) -> int | bool:
    """True for a stream read to ``data: [DONE]``; the status code of an answer that is not 200."""
    body = {"model": configuration, "stream": True, "messages": [{"role": "user", "content": "Say hello."}]}
    headers = {"Authorization": f"Bearer {token}"}
    OPEN[0] += 1
    try:
        async with client.stream("POST", CHAT, json=body, headers=headers) as response:
            if response.status_code != 200:
                return int(response.status_code)
            text = "".join([chunk async for chunk in response.aiter_text()])
        return text.rstrip().endswith("data: [DONE]")
    finally:
        OPEN[0] -= 1


async def all_streams(
    base: str, configuration: str, token: str, count: int, opened: threading.Event
) -> list[bool]:
    import httpx

    # A connection per stream, none kept: reusing the client's idle connections under thousands of
    # streams, a few (2 to 10 in 5,000) failed in the client itself (ReadError from anyio's
    # ClosedResourceError: a connection the client's own pool had closed), with nothing in the
    # server's log. A streaming client holds a connection per open stream in any case.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    # A generous timeout: on a loaded machine the last of thousands of requests waits its turn for the
    # server's CPU; a stream that times out is counted, by kind, among the failures.
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        tasks = []
        for start in range(0, count, BATCH):
            tasks += [
                asyncio.create_task(one_stream(client, configuration, token))
                for _ in range(start, min(count, start + BATCH))
            ]
            await asyncio.sleep(BATCH_PAUSE)
        opened.set()
        return await asyncio.gather(*tasks, return_exceptions=True)


def measure(args: argparse.Namespace, database_url: str, logs: Path) -> dict[str, Any]:
    from tests.fakes.provider_server import FakeProvider, Reply

    with FakeProvider(default_reply=Reply(text="Hello from a slow provider.", latency=LATENCY)) as fake:
        configuration, token = seed(fake.openai_base_url)
        held = measure_held(args, database_url, logs, fake, (configuration, token))
        fake.default_reply = Reply(text="Hello from a slow provider.", latency=LATENCY)
        port = free_port()
        with uvicorn(database_url, port, logs / "uvicorn.log") as server:
            base = f"http://127.0.0.1:{port}"
            warm = asyncio.run(all_streams(base, configuration, token, 5, threading.Event()))
            if 404 in warm:
                return {"skipped": f"{CHAT} is not served by this version"}
            if not all(result is True for result in warm):
                return {"problem": f"the warm-up streams failed: {warm}"}
            threads_before, rss_before = proc_status(server.pid)
            samples: list[tuple[float, int, int, int]] = []
            done, opened = threading.Event(), threading.Event()
            waiting: list[int] = []

            def sample() -> None:
                while not done.is_set():
                    threads, rss = proc_status(server.pid)
                    connections = db_connections(database_url)
                    samples.append((time.monotonic(), threads, rss, connections, OPEN[0]))
                    if opened.is_set() and len(fake.requests) >= args.streams + 5 and fake_waiting():
                        waiting.append(connections)
                    time.sleep(0.1)

            def fake_waiting() -> bool:  # every request has reached the provider, none answered yet
                return time.monotonic() - fake.requests[-1].time < LATENCY - 0.3

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            started, cpu_before = time.monotonic(), cpu_seconds(server.pid)
            results = asyncio.run(all_streams(base, configuration, token, args.streams, opened))
            wall, cpu = time.monotonic() - started, cpu_seconds(server.pid) - cpu_before
            done.set()
            sampler.join()
    peak_threads = max(s[1] for s in samples)
    peak_rss = max(s[2] for s in samples)
    most_open = max(s[4] for s in samples)
    # Memory per open stream where the most were open at once: what each waiting stream costs.
    at_most_open = max((s for s in samples if s[4] == most_open), key=lambda s: s[2])
    failures: dict[str, int] = {}
    for example in [result for result in results if isinstance(result, BaseException)][:3]:
        print(f"a failed stream: {example!r} {example.__cause__!r}")
    for result in results:
        if result is not True:
            kind = type(result).__name__ if isinstance(result, BaseException) else f"status {result}"
            failures[kind] = failures.get(kind, 0) + 1
    return {
        "streams": args.streams,
        "completed": sum(1 for result in results if result is True),
        "failures": failures,
        "wall_s": round(wall, 2),
        "server_cpu_s": round(cpu, 2),
        # The goal: wall time within 2x the provider's latency plus the CPU the requests needed.
        "wall_over_latency_plus_cpu": round(wall / (LATENCY + cpu), 2),
        "provider_latency_s": LATENCY,
        "streams_open_at_most": most_open,
        "kb_per_open_stream": round((at_most_open[2] - rss_before) / max(1, most_open), 1),
        "threads_before": threads_before,
        "threads_peak": peak_threads,
        "rss_before_mb": round(rss_before / 1024, 1),
        "rss_peak_mb": round(peak_rss / 1024, 1),
        "kb_per_stream": round((peak_rss - rss_before) / args.streams, 1),
        "db_connections_peak": max(s[3] for s in samples),
        "db_connections_while_waiting_median": statistics.median(waiting) if waiting else None,
        "db_connections_while_waiting_max": max(waiting) if waiting else None,
        **held,
    }


def measure_held(
    args: argparse.Namespace, database_url: str, logs: Path, fake: Any, seeded: tuple[str, str]
) -> dict[str, Any]:
    """The held streams (see the module docstring) on a fresh server."""
    from tests.fakes.provider_server import Reply

    configuration, token = seeded
    port = free_port()
    with uvicorn(database_url, port, logs / "uvicorn-held.log") as server:
        base = f"http://127.0.0.1:{port}"
        fake.default_reply = Reply(text="Hello from a slow provider.", latency=LATENCY)
        warm = asyncio.run(all_streams(base, configuration, token, 5, threading.Event()))
        if not all(result is True for result in warm):
            return {"held_problem": f"the warm-up streams failed: {warm}"}
        fake.default_reply = Reply(text="Hello from a slow provider.", latency=HELD_LATENCY)
        _, rss_before = proc_status(server.pid)
        first = len(fake.requests)
        samples: list[tuple[int, int, int]] = []  # (streams waiting at the provider, rss, threads)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                now = time.monotonic()
                waiting = sum(1 for request in fake.requests[first:] if now - request.time < HELD_LATENCY)
                threads, rss = proc_status(server.pid)
                samples.append((waiting, rss, threads))
                time.sleep(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        results = asyncio.run(all_streams(base, configuration, token, args.held, threading.Event()))
        done.set()
        sampler.join()
    waiting, rss, _ = max(samples, key=lambda sample: (sample[0], sample[1]))
    return {
        "held_streams": args.held,
        "held_completed": sum(1 for result in results if result is True),
        "held_provider_latency_s": HELD_LATENCY,
        "held_waiting_at_most": waiting,
        "kb_per_waiting_stream": round((rss - rss_before) / max(1, waiting), 1),
        "held_threads_peak": max(sample[2] for sample in samples),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 streams instead of 1,000")
    parser.add_argument("--streams", type=int, default=None)
    parser.add_argument("--held", type=int, default=None, help="held streams (default 1,000)")
    args = parser.parse_args()
    args.streams = args.streams or (100 if args.quick else 1000)
    args.held = args.held or (100 if args.quick else 1000)
    database_url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    problem = postgres_problem(database_url)
    if problem:
        required = os.environ.get("REQUIRE_SERVICES") == "1"
        print(f"streams benchmark {'cannot run' if required else 'skipped'}: {problem}")
        print(json.dumps({"benchmark": "streams", "skipped": problem}))
        return 1 if required else 0
    name = f"{urlsplit(database_url).path.lstrip('/') or 'govctx'}_streams_{os.getpid()}"
    import tempfile

    with (
        tempfile.TemporaryDirectory(prefix="bench-streams-") as logs,
        bench_database(database_url, name) as url,
    ):
        os.environ.update(DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=url)
        os.environ.pop("REDIS_URL", None)
        import django

        django.setup()
        import logging

        logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request of the client's
        result = {"benchmark": "streams", **measure(args, url, Path(logs))}
        if result.get("failures"):  # what the server said about them
            lines = (Path(logs) / "uvicorn.log").read_text(errors="replace").splitlines()
            print("\n".join([line for line in lines if "Error" in line or "error" in line][-20:]))
    for key, value in result.items():
        print(f"{key:>40}  {value}")
    print(json.dumps(result, separators=(",", ":")))
    complete = result.get("completed") == args.streams and result.get("held_completed") == args.held
    return 0 if "skipped" in result or complete else 1


if __name__ == "__main__":
    sys.exit(main())
