"""What a worker benchmark (``bench/concurrency.py``) measures while a batch runs: the workers' memory,
their PostgreSQL connections and the fake's held requests (sampled), and where the CPU goes, from
``/proc`` (Linux): a Celery worker's main thread (its consumer: receiving, acknowledging, handing tasks
to the pool) apart from its other threads (the tasks, the database pool's and the lease heartbeat's
threads), its voluntary context switches (a thread that blocked: on I/O, on a lock, for the
interpreter's lock), and the CPU of the PostgreSQL backends serving the workers, which share the
machine's cores with them.

Not a benchmark itself (the Makefile runs only ``bench/[a-z]*.py``). A figure that ``/proc`` does not
give (another system, another user's processes) is None.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._common import Services, admin_dsn, cpu_seconds

WORKER_APPLICATION = "govctx-bench-worker"  # the workers' application_name on PostgreSQL (PGAPPNAME)

TICKS = os.sysconf("SC_CLK_TCK")


def _stat_cpu(stat: Path) -> float:
    """User + system CPU seconds of the process or thread whose ``stat`` file this is."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _voluntary_switches(status: Path) -> int:
    for line in status.read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


@dataclass(frozen=True)
class WorkerCpu:
    """A worker process's CPU seconds: its main thread's, its other threads' (those alive now), and
    its threads' voluntary context switches."""

    main_thread: float
    other_threads: float
    switches: int

    def __add__(self, other: WorkerCpu) -> WorkerCpu:
        return WorkerCpu(
            self.main_thread + other.main_thread,
            self.other_threads + other.other_threads,
            self.switches + other.switches,
        )

    def __sub__(self, before: WorkerCpu) -> WorkerCpu:
        return WorkerCpu(
            self.main_thread - before.main_thread,
            self.other_threads - before.other_threads,
            self.switches - before.switches,
        )


def worker_cpu(pid: int) -> WorkerCpu | None:
    """``pid``'s CPU, its main thread's apart; None when ``/proc`` does not show it. The other
    threads' is the process's less the main thread's: summing each thread's, every thread started in
    between would count short by half a clock tick on average (each thread's is truncated to ticks),
    about a tick per new thread of a threads pool."""
    try:
        total = _stat_cpu(Path(f"/proc/{pid}/stat"))
        main = _stat_cpu(Path(f"/proc/{pid}/task/{pid}/stat"))
        switches = 0
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                switches += _voluntary_switches(task / "status")
            except FileNotFoundError:  # the thread ended
                continue
    except OSError:
        return None
    return WorkerCpu(main, total - main, switches)


def processes_cpu(pids: list[int]) -> dict[int, float] | None:
    """CPU seconds of each of ``pids`` that still runs; None when ``/proc`` refuses one (another user's
    processes on a hardened system)."""
    found = {}
    for pid in pids:
        try:
            found[pid] = _stat_cpu(Path(f"/proc/{pid}/stat"))
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return found


def backends(dsn: str, database: str, application: str) -> list[int]:
    """The process ids of the PostgreSQL backends connected to ``database`` as ``application`` (read
    through ``dsn``, a connection to another database)."""
    import psycopg

    query = "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s"
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [int(row[0]) for row in conn.execute(query, (database, application)).fetchall()]


def backends_cpu(dsn: str, database: str, application: str) -> dict[int, float] | None:
    """CPU seconds of each backend :func:`backends` finds; None when ``/proc`` does not show them."""
    return processes_cpu(backends(dsn, database, application))


def cpu_since(before: dict[int, float] | None, after: dict[int, float] | None) -> float | None:
    """CPU spent between two readings of :func:`processes_cpu`: a process that started in between
    counts from its start, one that ended in between is missed (a pool keeps its connections)."""
    if before is None or after is None:
        return None
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())


# --- sampling ---------------------------------------------------------------------------------------------


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class Samples:
    in_flight: list[int] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)
    worker_connections: list[int] = field(default_factory=list)
    rss: dict[int, list[int]] = field(default_factory=dict)


@contextmanager
def sampler(services: Services, fake: Any, pids: list[int], interval: float = 0.05) -> Iterator[Samples]:
    """Polls the fake's held requests, ``pg_stat_activity`` (from a connection to another database, so
    the sampler is not counted) and the workers' RSS until the block ends."""
    import psycopg

    samples = Samples(rss={pid: [] for pid in pids})
    stop = threading.Event()
    query = (
        "SELECT count(*), count(*) FILTER (WHERE application_name = %s) "
        "FROM pg_stat_activity WHERE datname = %s"
    )

    def poll() -> None:
        with psycopg.connect(admin_dsn(services.database_url), autocommit=True) as conn:
            while not stop.is_set():
                row = conn.execute(query, (WORKER_APPLICATION, services.bench_database)).fetchone()
                assert row is not None
                samples.connections.append(int(row[0]))
                samples.worker_connections.append(int(row[1]))
                samples.in_flight.append(fake.holding)
                for pid in pids:
                    samples.rss[pid].append(rss_bytes(pid))
                stop.wait(interval)

    thread = threading.Thread(target=poll, name="sampler", daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join(timeout=10)


@dataclass
class Window:
    """What the workers and the fake did while one batch ran (see :func:`measuring`)."""

    idle_rss: dict[int, int]
    samples: Samples = field(default_factory=Samples)
    worker_cpu: float = 0.0
    threads: WorkerCpu | None = None  # the workers' CPU by thread (bench/_measuring.py), summed
    database_cpu: float | None = None  # the workers' PostgreSQL backends'
    model_calls: int = 0
    provider_peak: int = 0
    provider_connections: int = 0  # connections the workers opened to the fake


@contextmanager
def measuring(services: Services, fake: Any, pids: list[int]) -> Iterator[Window]:
    """Measures the workers ``pids`` and the fake while the block runs the batch: their CPU (by thread,
    and their PostgreSQL backends'), memory and connections, the requests the fake received and held
    at once (its record is reset first) and the connections it accepted."""
    fake.reset()
    window = Window(idle_rss={pid: rss_bytes(pid) for pid in pids})
    dsn = admin_dsn(services.database_url)
    database_before = backends_cpu(dsn, services.bench_database, WORKER_APPLICATION)
    threads_before = [worker_cpu(pid) for pid in pids]
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    connections_before = fake.connections_accepted
    with sampler(services, fake, pids) as window.samples:
        fake.peak_reset()
        yield window
    window.worker_cpu = sum(cpu_seconds(pid) for pid in pids) - cpu_before
    threads = [
        after - before
        for before, after in zip(threads_before, [worker_cpu(pid) for pid in pids], strict=True)
        if before is not None and after is not None
    ]
    if len(threads) == len(pids):
        window.threads = sum(threads[1:], threads[0])
    window.database_cpu = cpu_since(
        database_before, backends_cpu(dsn, services.bench_database, WORKER_APPLICATION)
    )
    window.model_calls = len(fake.requests)
    window.provider_peak = fake.peak
    window.provider_connections = fake.connections_accepted - connections_before
