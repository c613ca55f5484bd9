"""The cost of writing one governance event before and after the hash chain, on SQLite and PostgreSQL.

Run: ``.venv/bin/python bench/governance_log.py [--quick]``. Prints a table and ends with exactly one
JSON line (``{"benchmark": "governance_log", ...}``). Never passes or fails on time.

What is measured, in the same run, each write its own transaction (as a refusal's event is):
* ``unchained``: the event as it was written before the chain: redaction of its names, validation,
  one ``INSERT``;
* ``chained``: ``governance.services.enforced_event_record``, i.e. the same plus the chain: the head
  row locked, the digest, the ``INSERT`` and the head's ``UPDATE``.
On PostgreSQL also the throughput of ``THREADS`` writer threads at once: unchained, chained over the
configured chains (``GOVERNANCE_LOG_CHAINS``, 16), and chained on a single chain (what one head row
for every writer would cost).

Each database mode runs in a child process with its own ``DATABASE_URL``; PostgreSQL is skipped (and
said so) when unreachable.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PG_URL = os.environ.get("SERVICES_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/govctx")
THREADS = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    writes = 100 if args.quick else 1000
    if args.child:
        print(json.dumps(measure(args.child, writes)))
        return
    results = {mode: spawn(mode, args.quick) for mode in ("sqlite", "postgresql")}
    report(results, writes)


def spawn(mode: str, quick: bool) -> dict[str, Any]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    env.pop("REDIS_URL", None)
    if mode == "sqlite":
        env["DATABASE_URL"] = f"sqlite:////tmp/governance-log-{uuid.uuid4().hex}.sqlite3"
    else:
        name = f"bench_govlog_{uuid.uuid4().hex[:8]}"
        if not _pg(f'CREATE DATABASE "{name}"'):
            return {"skipped": "PostgreSQL unreachable"}
        env["DATABASE_URL"] = PG_URL.rsplit("/", 1)[0] + "/" + name
    command = [sys.executable, __file__, "--child", mode] + (["--quick"] if quick else [])
    try:
        out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    finally:
        if mode == "postgresql":
            _pg(f'DROP DATABASE IF EXISTS "{env["DATABASE_URL"].rsplit("/", 1)[1]}" WITH (FORCE)')
        else:
            Path(env["DATABASE_URL"][len("sqlite:///") :]).unlink(missing_ok=True)
    if out.returncode != 0:
        raise SystemExit(f"{mode} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pg(statement: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(
            PG_URL.rsplit("/", 1)[0] + "/postgres", autocommit=True, connect_timeout=3
        ) as db:
            db.execute(statement)
        return True
    except Exception:
        return False


# --- the child: one database mode ------------------------------------------------------------------


def measure(mode: str, writes: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    unchained, chained = [], []
    for _ in range(3):  # interleaved rounds, so drift on a shared machine hits both alike
        unchained += _timed(_unchained_write, writes // 3)
        chained += _timed(_chained_write, writes // 3)
    result: dict[str, Any] = {
        "mode": mode,
        "n": len(chained),
        "unchained_us": _summary(unchained),
        "chained_us": _summary(chained),
    }
    if mode == "postgresql":
        result["threads"] = THREADS
        result["unchained_per_s"] = _throughput(_unchained_write, writes)
        result["chained_per_s"] = _throughput(_chained_write, writes)
        result["one_chain_per_s"] = _throughput(_chained_write, writes, chains=1)
    from governance.chain.verify import governance_log_verify

    started = time.perf_counter()
    verification = governance_log_verify()
    # The baseline's rows sit on a chain no writer uses and do not verify; they cost the same to check.
    result["verify_events_per_s"] = round(verification.events / (time.perf_counter() - started))
    return result


_SEQ = iter(range(1, 10**9))


def _unchained_write(n: int) -> None:
    """The write as it was before the chain (a chain number no writer uses keeps the new columns,
    now required, out of the way: a plain ``INSERT``)."""
    from governance.models import GovernanceEvent
    from governance.services import _redacted  # the same memoised redaction, for a fair baseline

    event = GovernanceEvent(
        correlation_id=_redacted("bench"),
        decision="secret_redacted",
        outcome="enforced",
        reason=_redacted(f"n{n}"),
    )
    event.full_clean(exclude=["chain", "seq", "prev_hash", "hash"])
    event.chain, event.seq, event.prev_hash, event.hash = 32000, next(_SEQ), "", ""
    event.save()


def _chained_write(n: int) -> None:
    from governance.services import EventContext, enforced_event_record
    from governance.vocabulary import Decision

    enforced_event_record(
        context=EventContext(correlation_id="bench"), decision=Decision.SECRET_REDACTED, reason=f"n{n}"
    )


def _timed(write: Any, count: int) -> list[float]:
    times = []
    for n in range(count):
        started = time.perf_counter()
        write(n)
        times.append((time.perf_counter() - started) * 1e6)
    return times


def _throughput(write: Any, total: int, chains: int | None = None) -> int:
    from django.conf import settings
    from django.db import connections

    configured = settings.GOVERNANCE_LOG_CHAINS
    settings.GOVERNANCE_LOG_CHAINS = chains or configured
    start = threading.Barrier(THREADS + 1)

    def writer() -> None:
        start.wait()
        for n in range(total // THREADS):
            write(n)
        connections.close_all()

    threads = [threading.Thread(target=writer) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    settings.GOVERNANCE_LOG_CHAINS = configured
    return round((total // THREADS) * THREADS / (time.perf_counter() - started))


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 1),
        "p90": round(ordered[int(len(ordered) * 0.9)], 1),
    }


def report(results: dict[str, dict[str, Any]], writes: int) -> None:
    print(f"governance event write, {writes} writes per mode (microseconds; median / p90)")
    for mode, result in results.items():
        if "skipped" in result:
            print(f"  {mode:<11} skipped: {result['skipped']}")
            continue
        before, after = result["unchained_us"], result["chained_us"]
        ratio = after["median"] / before["median"]
        print(
            f"  {mode:<11} unchained {before['median']:>8} / {before['p90']:<8} chained {after['median']:>8} / "
            f"{after['p90']:<8} x{ratio:.2f}  verify {result['verify_events_per_s']} events/s"
        )
        if "threads" in result:
            print(
                f"  {mode:<11} {result['threads']} threads: unchained {result['unchained_per_s']}/s, chained "
                f"{result['chained_per_s']}/s, one chain {result['one_chain_per_s']}/s"
            )
    print(json.dumps({"benchmark": "governance_log", **results}))


if __name__ == "__main__":
    main()
