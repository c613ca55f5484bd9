"""Many slow steps at once: 512 runs of 2 steps against a 2 s fake provider on 2 Celery worker processes.

Run: ``.venv/bin/python bench/concurrency.py [--quick] [--runs N] [--latency S]``. Prints a table and
ends with exactly one JSON line (``{"benchmark": "concurrency", ...}``). It reports against targets and
never passes or fails on time: it exits non-zero only when a correctness check fails (a run that did not
complete with the expected answer, a step missing or recorded twice, a model call made twice).

Services: as ``bench/throughput.py`` (``DATABASE_URL``, ``REDIS_URL``, defaults matching the Makefile's
``SERVICES_*``, a dedicated database created and dropped, skipped cleanly unless ``REQUIRE_SERVICES=1``).

Workload: each run is a tool call (``snippets_by_tag``) then a final answer ("Done."); the loopback fake
provider answers every request after ``--latency`` seconds (2 s; ``--quick`` 0.5 s). N runs (512;
``--quick`` 128) are created in one transaction, so all their first steps are enqueued at once, after a
warm-up batch that is not measured (32 runs; ``--quick`` 8). The same batch runs on three settings,
each on 2 fresh worker processes (``--pool=threads``), in this order:

* ``today``: the settings before the pool: ``DATABASE_POOL=false`` (one persistent connection per
  worker thread, kept across tasks) and ``--concurrency=8``; in ``--quick`` mode it runs a quarter of
  the batch (its slots are 16, so the whole batch would take N / 4 x latency seconds);
* ``pooled``: the recommended production settings: the PostgreSQL pool (``DATABASE_POOL_MAX_SIZE``
  16 per process; a step gives its connection back before the provider call) and ``--concurrency=256``;
* ``floor``: the same steps' provider calls with nothing of the service around them
  (``bench/_floor_worker.py``: a Celery task replays the body each step index sent in the pooled
  batch through the official ``openai`` SDK, reads the streamed reply and enqueues the next step; no
  Django, no database), ``--concurrency=256``. What it reaches bounds what the service can reach on
  the same machine, since every step does its work and more; ``pooled_share_of_floor`` is the pooled
  throughput over the floor's. Its steps in flight are the requests the fake held at once;
* ``durable floor``: the floor with the writes any crash-safe runtime makes per step on PostgreSQL
  (``bench/_floor_worker.py`` with ``FLOOR_DURABLE=1``: the step's claim before the call, its reply
  after, one statement each, through a pool of 16 per process), ``--concurrency=256``;
  ``pooled_share_of_durable_floor`` is the pooled throughput over its own. What separates the floor
  from the durable floor is the cost of durability itself; what separates the durable floor from the
  service is what the service does beyond it (assembly, governance, labels, receipts, the log, leases,
  the tool phase).

Figures:

* ``steps in flight``: the most steps in their model phase at one moment (from each step's
  ``duration_ms`` and ``created_at``: assemble, govern, fit, the provider call and the record; the
  step holds its worker thread throughout); ``provider calls at once``: requests the fake was
  holding at once (each step makes exactly one), its peak and its mean over the batch;
  ``provider connections opened``: the connections the workers opened to the fake during the batch
  (the SDK alone opens one per streamed call; the service's client keeps them, providers/kept_alive.py);
* ``PostgreSQL connections``: backends connected to the benchmark's database, polled from
  ``pg_stat_activity`` every 50 ms (workers: those with the workers' ``application_name``; all: the
  benchmark process's own connections included);
* ``ceiling`` = min(worker slots, N) / (steps per run x latency) runs/s, as in ``bench/throughput.py``
  (no run goes faster than its steps' latency, no more than one step runs per slot, and a batch
  smaller than the slots cannot fill them); ``share`` = runs/s / ceiling, with runs/s = N / (last
  ``finished_at`` - the batch's commit);
  ``peak slot share`` = peak steps in flight / slots;
* ``worker RSS``: ``VmRSS`` of each worker process (one process each in the threads pool) before the
  batch and at its peak, read from ``/proc`` with the connections;
* ``CPU-bound ceiling``: cores / (steps per run x worker CPU per step), as in ``bench/throughput.py``;
* ``worker CPU per step``, split (``bench/_measuring.py``) into the workers' main threads (Celery's consumer:
  receiving, acknowledging, dispatching) and their other threads (the tasks, the database pool's and
  the lease heartbeat's), with the threads' voluntary context switches per step (each a thread that
  blocked: on I/O, on a lock, waiting for the interpreter's lock); ``PostgreSQL backends' CPU per
  step``: the backends connected as the workers, which share the machine's cores with them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    ANSWER,
    WORKERS,
    Services,
    celery_workers,
    check_runs,
    create_runs,
    run_on_services,
    step_scripted_provider,
    wait_ready,
    wait_terminal,
)
from bench._measuring import WORKER_APPLICATION, Window, measuring

STEPS = 2
TARGETS = {"steps_in_flight": 400, "connections": 40, "share_of_ceiling": 0.80}


@dataclass(frozen=True)
class Setting:
    name: str
    concurrency: int
    env: dict[str, str]
    description: str


TODAY = Setting("today", 8, {"DATABASE_POOL": "false"}, "no pool, a connection per thread, 8 threads")


def pooled_setting(concurrency: int) -> Setting:
    env = {"DATABASE_POOL": "true", "DATABASE_POOL_MAX_SIZE": "16"}
    return Setting("pooled", concurrency, env, f"pool of 16, {concurrency} threads")


def floor_setting(concurrency: int) -> Setting:
    return Setting("floor", concurrency, {}, f"Celery + openai SDK only, {concurrency} threads")


def durable_floor_setting(concurrency: int) -> Setting:
    env = {"FLOOR_DURABLE": "1", "PGAPPNAME": WORKER_APPLICATION}
    return Setting(
        "durable floor", concurrency, env, f"the floor + claim and reply rows, {concurrency} threads"
    )


# --- the fake provider -------------------------------------------------------------------------------------


def counting_provider(latency: float) -> Any:
    """A fake that holds each request ``latency`` seconds (counting how many it holds at once), then
    answers a tool call until the request carries ``STEPS - 1`` tool results, then :data:`ANSWER`."""

    class CountingProvider(step_scripted_provider(STEPS)):  # type: ignore[misc]
        def __post_init__(self) -> None:
            super().__post_init__()
            self.counter_lock = threading.Lock()
            self.holding = 0
            self.peak = 0

        def _next_reply(self):  # type: ignore[no-untyped-def]
            with self.counter_lock:
                self.holding += 1
                self.peak = max(self.peak, self.holding)
            try:
                self._closing.wait(latency)
            finally:
                with self.counter_lock:
                    self.holding -= 1
            return super()._next_reply()

        def peak_reset(self) -> None:
            with self.counter_lock:
                self.peak = self.holding

    return CountingProvider()


# --- measuring --------------------------------------------------------------------------------------------


def answer_problems(ids: list[str]) -> list[str]:
    """Each run's last assistant message is the expected final answer."""
    from agents.models import RunMessage

    last: dict[str, tuple[int, str]] = {}
    for run_id, position, content in RunMessage.objects.filter(run_id__in=ids, role="assistant").values_list(
        "run_id", "position", "content"
    ):
        if str(run_id) not in last or position > last[str(run_id)][0]:
            last[str(run_id)] = (position, content)
    return [
        f"run {run_id}: final answer {last.get(run_id, (0, None))[1]!r}"
        for run_id in ids
        if last.get(run_id, (0, ""))[1] != ANSWER
    ]


def steps_overlap_peak(ids: list[str]) -> int:
    """The most steps whose model phase (``AgentStep.duration_ms`` before its ``created_at``: assemble,
    govern, fit, the provider call, the record) overlapped at one moment."""
    from agents.models import AgentStep

    edges: list[tuple[float, int]] = []
    for created, duration in AgentStep.objects.filter(run_id__in=ids).values_list(
        "created_at", "duration_ms"
    ):
        end = created.timestamp()
        edges += [(end - duration / 1000, 1), (end, -1)]
    peak = running = 0
    for _, change in sorted(edges):  # at a tie the end (-1) sorts first: touching is not overlapping
        running += change
        peak = max(peak, running)
    return peak


@dataclass
class Batch:
    """What one setting's measured batch left behind, before it is turned into figures."""

    setting: Setting
    work: Workload
    wall: float
    window: Window
    in_flight: int
    problems: list[str]
    retried: dict[str, int] = field(default_factory=dict)  # failed calls retried, by exception class


def figures(batch: Batch) -> dict[str, Any]:
    setting, runs = batch.setting, batch.work.runs
    slots = WORKERS * setting.concurrency
    rate = runs / batch.wall if batch.wall > 0 else 0.0
    ceiling = min(slots, runs) / (STEPS * batch.work.latency)
    window = batch.window
    cpu_per_step = window.worker_cpu / (runs * STEPS)

    def per_step(seconds: float | None) -> float | None:
        return None if seconds is None else round(seconds * 1000 / (runs * STEPS), 2)

    pids = list(window.idle_rss)
    held = window.samples.in_flight
    mib = 1024 * 1024
    return {
        "setting": setting.name,
        "description": setting.description,
        "runs": runs,
        "concurrency_per_worker": setting.concurrency,
        "slots": slots,
        "env": setting.env,
        "wall_seconds": round(batch.wall, 2),
        "runs_per_second": round(rate, 2),
        "ceiling_runs_per_second": round(ceiling, 2),
        "share_of_ceiling": round(rate / ceiling, 3),
        "steps_in_flight_peak": batch.in_flight,
        "provider_calls_at_once_peak": window.provider_peak,
        "provider_calls_at_once_mean": round(sum(held) / len(held), 1) if held else 0,
        "peak_slot_share": round(batch.in_flight / slots, 3),
        "connections_peak": max(window.samples.connections, default=0),
        "worker_connections_peak": max(window.samples.worker_connections, default=0),
        "worker_rss_idle_mib": [round(window.idle_rss[pid] / mib, 1) for pid in pids],
        "worker_rss_peak_mib": [round(max(window.samples.rss[pid], default=0) / mib, 1) for pid in pids],
        "worker_cpu_ms_per_step": round(cpu_per_step * 1000, 1),
        "worker_main_thread_cpu_ms_per_step": per_step(window.threads and window.threads.main_thread),
        "worker_other_threads_cpu_ms_per_step": per_step(window.threads and window.threads.other_threads),
        "worker_voluntary_switches_per_step": round(window.threads.switches / (runs * STEPS), 1)
        if window.threads
        else None,
        "database_cpu_ms_per_step": per_step(window.database_cpu),
        "cpu_bound_ceiling_runs_per_second": round((os.cpu_count() or 1) / (STEPS * cpu_per_step), 2)
        if cpu_per_step
        else None,
        "model_calls": window.model_calls,
        "provider_connections_opened": window.provider_connections,
        "retried_calls": batch.retried,
        "correct": not batch.problems,
        "problems": batch.problems[:20],
    }


@dataclass(frozen=True)
class Workload:
    """One setting's batch: ``runs`` runs of STEPS steps at ``latency`` seconds per model call, after
    ``warm_up`` runs that are not measured."""

    runs: int
    warm_up: int
    latency: float

    def timeout(self, setting: Setting) -> float:
        return 120 + self.runs * STEPS * self.latency / min(WORKERS * setting.concurrency, self.runs) * 3

    def warm_up_timeout(self) -> float:
        return 120 + 4 * self.latency * self.warm_up


def measure(
    services: Services, setting: Setting, work: Workload, fake: Any, configuration: Any, log_dir: Path
) -> Batch:
    from django.db.models import Max

    from agents.models import AgentRun

    with celery_workers(
        services,
        concurrency=setting.concurrency,
        log_dir=log_dir,
        name=setting.name,
        env={"PGAPPNAME": WORKER_APPLICATION, **setting.env},  # the sampler counts by application_name
    ) as workers:
        wait_ready(len(workers))
        # Not measured: loads the SDKs and opens the pools in both workers.
        warm_up, _ = create_runs(configuration, work.warm_up)
        if not wait_terminal(warm_up, timeout=work.warm_up_timeout()):
            raise RuntimeError(f"the {setting.name} warm-up did not finish; see the worker logs in {log_dir}")
        with measuring(services, fake, [worker.pid for worker in workers]) as window:
            ids, committed = create_runs(configuration, work.runs)
            timeout = work.timeout(setting)
            finished = wait_terminal(ids, timeout=timeout)
    problems = [] if finished else [f"runs still unfinished after {timeout:.0f}s"]
    problems += check_runs(ids, STEPS) + answer_problems(ids)
    if window.model_calls != work.runs * STEPS:
        problems.append(f"{window.model_calls} model calls for {work.runs * STEPS} steps")
    last = AgentRun.objects.filter(id__in=ids).aggregate(last=Max("finished_at"))["last"]
    wall = (last.timestamp() if last else time.time()) - committed
    return Batch(setting, work, wall, window, steps_overlap_peak(ids), problems)


# --- the floor --------------------------------------------------------------------------------------------


def step_bodies(fake: Any) -> list[dict[str, Any]]:
    """A request body per step index, as the pooled setting's steps sent them (step n carries n tool
    results)."""
    bodies: dict[int, dict[str, Any]] = {}
    for body in fake.bodies():
        tools = sum(1 for m in body.get("messages") or () if isinstance(m, dict) and m.get("role") == "tool")
        bodies.setdefault(tools, body)
    if sorted(bodies) != list(range(STEPS)):
        raise RuntimeError(f"the pooled batch sent no body for some step: {sorted(bodies)}")
    return [bodies[index] for index in range(STEPS)]


def floor_wait(store: Any, runs: int, timeout: float) -> bool:
    from bench import _floor_worker as floor

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if int(store.get(floor.DONE) or 0) + int(store.get(floor.WRONG) or 0) >= runs:
            return True
        time.sleep(0.05)
    return False


def durable_tables_create() -> None:
    """The durable floor's tables, empty, in the benchmark's database (the workers' pools open their
    connections when their first step runs, so the tables may be dropped while they idle)."""
    from django.db import connection

    from bench import _floor_worker as floor

    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS floor_claim, floor_reply")
        for statement in floor.DURABLE_TABLES:
            cursor.execute(statement)


def durable_problems(runs: int) -> list[str]:
    """Every step of the durable floor's batch claimed once and its reply stored."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT count(*) FROM floor_claim), (SELECT count(*) FROM floor_reply)")
        claims, replies = cursor.fetchone()
    steps = runs * STEPS
    if claims == replies == steps:
        return []
    return [f"durable floor: {claims} claims and {replies} replies stored for {steps} steps"]


def measure_floor(services: Services, setting: Setting, work: Workload, fake: Any, log_dir: Path) -> Batch:
    """The same batch as bench/_floor_worker.py's bare steps: Celery and the official SDK only."""
    import redis

    from bench import _floor_worker as floor

    bodies = log_dir / "floor-bodies.json"
    bodies.write_text(json.dumps(step_bodies(fake)))
    floor.app.conf.broker_url = services.redis_url
    store = redis.Redis.from_url(services.redis_url)
    keys = (floor.DONE, floor.WRONG, floor.LAST, floor.FAILURES)
    env = {"FLOOR_BROKER_URL": services.redis_url, "FLOOR_PROVIDER_URL": fake.openai_base_url}
    env.update(FLOOR_BODIES=str(bodies), **setting.env)
    durable = setting.env.get("FLOOR_DURABLE") == "1"
    if durable:
        durable_tables_create()
    with celery_workers(
        services,
        concurrency=setting.concurrency,
        log_dir=log_dir,
        name=setting.name,
        env=env,
        app="bench._floor_worker",
    ) as workers:
        wait_ready(len(workers), app=floor.app)
        store.delete(*keys)
        for run in range(work.warm_up):
            floor.step.apply_async((run, 0), queue=floor.QUEUE)
        if not floor_wait(store, work.warm_up, timeout=work.warm_up_timeout()):
            raise RuntimeError(f"the floor warm-up did not finish; see the worker logs in {log_dir}")
        store.delete(*keys)
        if durable:  # the batch numbers its runs from 0 again
            durable_tables_create()
        with measuring(services, fake, [worker.pid for worker in workers]) as window:
            started = time.time()
            for run in range(work.runs):
                floor.step.apply_async((run, 0), queue=floor.QUEUE)
            timeout = work.timeout(setting)
            finished = floor_wait(store, work.runs, timeout)
    done, wrong, last = (store.get(key) for key in keys[:3])
    failures = {key.decode(): int(count) for key, count in store.hgetall(floor.FAILURES).items()}
    store.delete(*keys)
    problems = [] if finished else [f"runs still unfinished after {timeout:.0f}s"]
    if int(done or 0) != work.runs or wrong:
        problems.append(
            f"{int(done or 0)} of {work.runs} runs ended with the expected answer, {int(wrong or 0)} wrong"
        )
    if window.model_calls < work.runs * STEPS:
        problems.append(f"{window.model_calls} model calls for {work.runs * STEPS} steps")
    if durable:
        problems += durable_problems(work.runs)
    wall = (float(last) if last else time.time()) - started
    # No step records here: the steps in flight are the requests the fake held at once.
    return Batch(setting, work, wall, window, window.provider_peak, problems, failures)


def print_table(result: dict[str, Any]) -> None:
    peers = result["peers"]
    rows: list[tuple[str, ...]] = [("", *(peer["setting"] for peer in peers))]

    def row(label: str, render: Any) -> None:
        rows.append((label, *(render(peer) for peer in peers)))

    row("settings", lambda p: p["description"])
    row("runs x steps", lambda p: f"{p['runs']} x {STEPS}")
    row("wall time", lambda p: f"{p['wall_seconds']:.1f} s")
    row("throughput", lambda p: f"{p['runs_per_second']:.1f} runs/s")
    row("slot ceiling", lambda p: f"{p['ceiling_runs_per_second']:.1f} runs/s ({p['slots']} slots)")
    row("share of ceiling", lambda p: f"{p['share_of_ceiling']:.0%}")
    row("CPU-bound ceiling", lambda p: f"{p['cpu_bound_ceiling_runs_per_second']} runs/s")
    row("steps in flight, peak", lambda p: str(p["steps_in_flight_peak"]))
    row(
        "provider calls at once, peak / mean",
        lambda p: f"{p['provider_calls_at_once_peak']} / {p['provider_calls_at_once_mean']}",
    )
    row(
        "provider connections opened",
        lambda p: f"{p['provider_connections_opened']} for {p['model_calls']} calls",
    )
    row("peak slot share", lambda p: f"{p['peak_slot_share']:.0%}")
    row(
        "PG connections peak (workers)", lambda p: f"{p['connections_peak']} ({p['worker_connections_peak']})"
    )
    row("worker RSS idle -> peak", lambda p: _rss(p))
    row("worker CPU per step", lambda p: f"{p['worker_cpu_ms_per_step']} ms")
    row(
        "  main thread / other threads",
        lambda p: (
            f"{p['worker_main_thread_cpu_ms_per_step']} / {p['worker_other_threads_cpu_ms_per_step']} ms"
        ),
    )
    row("  voluntary context switches per step", lambda p: str(p["worker_voluntary_switches_per_step"]))
    row("PostgreSQL backends' CPU per step", lambda p: f"{p['database_cpu_ms_per_step']} ms")
    row("failed calls retried", lambda p: ", ".join(f"{k} {v}" for k, v in p["retried_calls"].items()) or "-")
    row("every run correct", lambda p: "yes" if p["correct"] else "NO")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(
        f"{result['runs']} runs x {STEPS} steps, provider latency {result['provider_latency_ms']:.0f} ms, "
        f"{WORKERS} worker processes, load average before {result['load_average_before']}"
    )
    for r in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(r, widths, strict=True)))
    print(
        "targets (pooled): >= {steps_in_flight} steps in flight, <= {connections} connections, "
        ">= {share:.0%} of the ceiling".format(share=TARGETS["share_of_ceiling"], **TARGETS)
    )
    print(f"pooled throughput / floor throughput: {result['pooled_share_of_floor']:.0%}")
    print(
        f"pooled throughput / durable floor throughput: {result['pooled_share_of_durable_floor']:.0%} "
        f"(durable floor / floor: {result['durable_floor_share_of_floor']:.0%})"
    )


def _rss(peer: dict[str, Any]) -> str:
    return ", ".join(
        f"{idle:.0f}->{peak:.0f} MiB"
        for idle, peak in zip(peer["worker_rss_idle_mib"], peer["worker_rss_peak_mib"], strict=True)
    )


def run(services: Services, args: argparse.Namespace, log_dir: Path) -> dict[str, Any]:
    from django.core.management import call_command

    from bench.throughput import bench_configuration

    load_before = round(os.getloadavg()[0], 2)
    call_command("migrate", verbosity=0, interactive=False)
    warm_up = 8 if args.quick else 32
    batches = []
    with counting_provider(args.latency) as fake:
        configuration = bench_configuration(fake)
        for setting in (TODAY, pooled_setting(args.concurrency)):
            runs = args.runs if setting.name == "pooled" or not args.quick else max(16, args.runs // 4)
            work = Workload(runs, warm_up, args.latency)
            batches.append(measure(services, setting, work, fake, configuration, log_dir))
        # Last: they replay the bodies the pooled batch sent.
        work = Workload(args.runs, warm_up, args.latency)
        for setting in (floor_setting(args.concurrency), durable_floor_setting(args.concurrency)):
            batches.append(measure_floor(services, setting, work, fake, log_dir))
    peers = [figures(batch) for batch in batches]
    pooled, bare, durable = (
        next(peer for peer in peers if peer["setting"] == name)
        for name in ("pooled", "floor", "durable floor")
    )
    return {
        "benchmark": "concurrency",
        "quick": args.quick,
        "runs": args.runs,
        "steps_per_run": STEPS,
        "provider_latency_ms": args.latency * 1000,
        "workers": WORKERS,
        "load_average_before": load_before,
        "load_average_after": round(os.getloadavg()[0], 2),
        "cores": os.cpu_count(),
        "targets": TARGETS,
        "met": {
            "steps_in_flight": pooled["steps_in_flight_peak"] >= TARGETS["steps_in_flight"],
            "connections": pooled["connections_peak"] <= TARGETS["connections"],
            "share_of_ceiling": pooled["share_of_ceiling"] >= TARGETS["share_of_ceiling"],
        },
        "pooled_share_of_floor": round(pooled["runs_per_second"] / bare["runs_per_second"], 3)
        if bare["runs_per_second"]
        else None,
        "pooled_share_of_durable_floor": round(pooled["runs_per_second"] / durable["runs_per_second"], 3)
        if durable["runs_per_second"]
        else None,
        "durable_floor_share_of_floor": round(durable["runs_per_second"] / bare["runs_per_second"], 3)
        if bare["runs_per_second"]
        else None,
        "peers": peers,
        "correct": all(peer["correct"] for peer in peers),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="128 runs at 0.5 s (today's settings: 32)")
    parser.add_argument("--runs", type=int, default=None, help="concurrent runs (default 512)")
    parser.add_argument("--latency", type=float, default=None, help="provider latency in s (default 2)")
    parser.add_argument(
        "--concurrency", type=int, default=256, help="threads per pooled worker (default 256)"
    )
    args = parser.parse_args()
    args.runs = args.runs or (128 if args.quick else 512)
    args.latency = args.latency or (0.5 if args.quick else 2.0)
    return run_on_services("concurrency", lambda services, logs: _report(run(services, args, logs)))


def _report(result: dict[str, Any]) -> int:
    print_table(result)
    for peer in result["peers"]:
        for problem in peer["problems"]:
            print(f"problem ({peer['setting']}): {problem}")
    print(json.dumps(result, separators=(",", ":")))
    return 0 if result["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
