"""Agent-run throughput on real Celery workers, Redis and PostgreSQL, against a 200 ms fake provider.

Run: ``.venv/bin/python bench/throughput.py [--quick] [--runs N]``. Prints a table and ends with exactly
one JSON line (``{"benchmark": "throughput", ...}``). It reports against a target and never passes or
fails on time: it exits non-zero only when a correctness check fails (a run that did not complete, a
step index missing or recorded twice, a model call made twice).

Services: ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` from the environment, defaulting to the
Makefile's ``SERVICES_*`` URLs. A dedicated database ``<name>_bench_<pid>`` is created on that server,
migrated, and dropped at the end. When PostgreSQL or Redis is unreachable the benchmark is skipped
(exit 0, a message and a ``skipped`` JSON line) unless ``REQUIRE_SERVICES=1``. Do not run it at the same
time as the services suite on the same ``REDIS_URL``: that suite flushes its Redis database per test.

Workload: the loopback fake provider answers every request after ``LATENCY`` (200 ms). Each run takes
``--steps`` steps (default 2): a tool call (``snippets_by_tag``) on every step but the last, then a
final answer; the fake decides by counting the tool results in the request, so concurrent runs cannot
take each other's replies. N runs (default 200, ``--quick`` 40) are created in one transaction, so all
their first steps are enqueued at the same moment, after a warm-up batch that is not measured.

Workers: 2 processes (one per core), ``--pool=threads`` with ``--concurrency`` threads each (default
8). A step spends most of its time waiting on the provider, so threads overlap those waits cheaply; the
CPU part of a step (assembly, governance, fit, redaction, ORM, the SDK's request and reply) holds the GIL,
so one process uses at most one core and two processes use both. A core stays busy with about
(latency + CPU) / CPU threads; 8 covers a step of 25 ms CPU per 200 ms wait with headroom for database
round trips. When a step needs more CPU than that the workers are CPU-bound: the table then shows the
CPU-bound ceiling beside the slot ceiling. The prefork pool would need one process (and one database
connection, and one copy of the SDKs) per slot. The runtime is safe under threads: Django keeps one
database connection per thread (taken from the process's pool and given back during provider calls
and after each task, docs/decisions/0009-connection-pool-and-slow-steps.md), the per-process caches
are locked LRUs of values that are only ever read, the encodings are immutable, the redaction plugins
hold no shared state, and the pooled SDK clients are thread-safe.

Figures:

* ``runs/s`` = N / (last run's ``finished_at`` - the moment the N runs were committed and enqueued);
* ``step service time``: ``AgentStep.duration_ms``, measured by the worker from the start of the model
  phase (assemble, govern, fit, provider call) to the step's record; it includes the 200 ms latency;
* ``step turnaround`` (enqueue -> record): from the step's enqueue to its ``AgentStep.created_at``.
  Step 0 is enqueued at the batch commit; step k > 0 right after step k-1's last tool result is stored
  (that message's ``created_at``; the enqueue follows within the same commit). It includes queueing;
* ``ceiling`` = worker slots / (steps per run x provider latency): no run can go faster than its steps'
  provider latency, and no more than one step runs per slot; ``share`` = runs/s / ceiling (target 60%);
* ``CPU-bound ceiling`` = cores / (steps per run x worker CPU per step), worker CPU read from
  ``/proc/<pid>/stat`` over the measured batch (PostgreSQL's and the fake's CPU are not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import (
    WORKERS,
    Services,
    celery_workers,
    check_runs,
    cpu_seconds,
    create_runs,
    run_on_services,
    step_scripted_provider,
    wait_ready,
    wait_terminal,
)

LATENCY = 0.2
TARGET_SHARE = 0.60


# --- the workload -----------------------------------------------------------------------------------------


def bench_configuration(fake: Any) -> Any:
    from tests.agents.runs import fake_configuration
    from tests.factories import snippet_make

    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    return fake_configuration(fake, max_iterations=20)


# --- measuring --------------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0-100)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def step_latencies(ids: list[str], committed: float) -> tuple[list[float], list[float]]:
    """(service times, turnarounds) in ms, as defined in the module docstring."""
    from agents.models import AgentStep, RunMessage

    last_tool: dict[tuple[str, int], float] = {}
    for run_id, index, created in RunMessage.objects.filter(run_id__in=ids, role="tool").values_list(
        "run_id", "step_index", "created_at"
    ):
        key = (str(run_id), index)
        last_tool[key] = max(last_tool.get(key, 0.0), created.timestamp())
    service: list[float] = []
    turnaround: list[float] = []
    for run_id, index, duration, created in AgentStep.objects.filter(run_id__in=ids).values_list(
        "run_id", "index", "duration_ms", "created_at"
    ):
        service.append(float(duration))
        enqueued = committed if index == 0 else last_tool[(str(run_id), index - 1)]
        turnaround.append((created.timestamp() - enqueued) * 1000)
    return service, turnaround


@dataclass(frozen=True)
class Measurement:
    runs: int
    steps: int
    concurrency: int
    wall: float
    service_ms: list[float]
    turnaround_ms: list[float]
    worker_cpu: float
    model_calls: int
    problems: list[str]


def measure(services: Services, args: argparse.Namespace, log_dir: Path) -> Measurement:
    from django.core.management import call_command
    from django.db.models import Max

    from agents.models import AgentRun

    call_command("migrate", verbosity=0, interactive=False)
    with (
        step_scripted_provider(args.steps, latency=LATENCY)() as fake,
        celery_workers(services, concurrency=args.concurrency, log_dir=log_dir, stop_seconds=20) as workers,
    ):
        configuration = bench_configuration(fake)
        wait_ready(len(workers))
        warm_up, _ = create_runs(configuration, min(args.runs, WORKERS * args.concurrency * 2))
        if not wait_terminal(warm_up, timeout=120):
            raise RuntimeError("the warm-up runs did not finish; see the worker logs in " + str(log_dir))
        fake.reset()
        cpu_before = sum(cpu_seconds(worker.pid) for worker in workers)
        ids, committed = create_runs(configuration, args.runs)
        timeout = 60 + args.runs * args.steps * LATENCY
        finished = wait_terminal(ids, timeout=timeout)
        worker_cpu = sum(cpu_seconds(worker.pid) for worker in workers) - cpu_before
        model_calls = len(fake.requests)
    problems = [] if finished else [f"runs still unfinished after {timeout:.0f}s"]
    problems += check_runs(ids, args.steps)
    if model_calls != args.runs * args.steps:
        problems.append(f"{model_calls} model calls for {args.runs * args.steps} steps")
    last = AgentRun.objects.filter(id__in=ids).aggregate(last=Max("finished_at"))["last"]
    service, turnaround = step_latencies(ids, committed)
    return Measurement(
        runs=args.runs,
        steps=args.steps,
        concurrency=args.concurrency,
        wall=(last.timestamp() if last else time.time()) - committed,
        service_ms=service,
        turnaround_ms=turnaround,
        worker_cpu=worker_cpu,
        model_calls=model_calls,
        problems=problems,
    )


def summary(m: Measurement) -> dict[str, Any]:
    slots = WORKERS * m.concurrency
    ceiling = slots / (m.steps * LATENCY)
    rate = m.runs / m.wall if m.wall > 0 else 0.0
    cpu_per_step = m.worker_cpu / (m.runs * m.steps)
    cores = os.cpu_count() or 1

    def stats(values: list[float]) -> dict[str, float]:
        if not values:
            return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
        return {f"p{q}": round(percentile(values, q), 1) for q in (50, 95, 99)}

    return {
        "benchmark": "throughput",
        "runs": m.runs,
        "steps_per_run": m.steps,
        "provider_latency_ms": LATENCY * 1000,
        "workers": WORKERS,
        "pool": "threads",
        "concurrency_per_worker": m.concurrency,
        "wall_seconds": round(m.wall, 3),
        "runs_per_second": round(rate, 2),
        "steps_per_second": round(rate * m.steps, 2),
        "ceiling_runs_per_second": round(ceiling, 2),
        "share_of_ceiling": round(rate / ceiling, 3),
        "target_share": TARGET_SHARE,
        "worker_cpu_ms_per_step": round(cpu_per_step * 1000, 1),
        "cpu_bound_ceiling_runs_per_second": round(cores / (m.steps * cpu_per_step), 2)
        if cpu_per_step
        else None,
        "step_service_ms": stats(m.service_ms),
        "step_turnaround_ms": stats(m.turnaround_ms),
        "model_calls": m.model_calls,
        "correct": not m.problems,
    }


def print_table(result: dict[str, Any]) -> None:
    rows = [
        ("runs x steps", f"{result['runs']} x {result['steps_per_run']} (provider latency 200 ms)"),
        ("workers", f"{result['workers']} x threads pool, concurrency {result['concurrency_per_worker']}"),
        ("wall time", f"{result['wall_seconds']:.2f} s"),
        ("throughput", f"{result['runs_per_second']:.2f} runs/s ({result['steps_per_second']:.1f} steps/s)"),
        ("ceiling (slots)", f"{result['ceiling_runs_per_second']:.2f} runs/s"),
        ("share of ceiling", f"{result['share_of_ceiling']:.1%} (target {TARGET_SHARE:.0%})"),
        ("worker CPU per step", f"{result['worker_cpu_ms_per_step']} ms"),
        ("CPU-bound ceiling", f"{result['cpu_bound_ceiling_runs_per_second']} runs/s"),
    ]
    for label in ("service", "turnaround"):
        figures = result[f"step_{label}_ms"]
        rows.append((f"step {label} p50/p95/p99", " / ".join(f"{figures[k]:.0f}" for k in figures) + " ms"))
    rows.append(("correct", "yes" if result["correct"] else "NO"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 runs instead of 200")
    parser.add_argument("--runs", type=int, default=None, help="concurrent runs (default 200)")
    parser.add_argument("--steps", type=int, default=2, help="steps per run (default 2)")
    parser.add_argument("--concurrency", type=int, default=8, help="threads per worker (default 8)")
    args = parser.parse_args()
    args.runs = args.runs or (40 if args.quick else 200)
    return run_on_services("throughput", lambda services, logs: _report(measure(services, args, logs)))


def _report(measurement: Measurement) -> int:
    result = summary(measurement)
    print_table(result)
    for problem in measurement.problems[:20]:
        print(f"problem: {problem}")
    print(json.dumps(result, separators=(",", ":")))
    return 1 if measurement.problems else 0


if __name__ == "__main__":
    sys.exit(main())
