"""Per-step overhead of the governed agent step at a 200-message transcript, on SQLite and PostgreSQL.

Run: ``.venv/bin/python bench/step_overhead.py [--quick]``. Prints a table and ends with exactly one
JSON line (``{"benchmark": "step_overhead", ...}``). Never passes or fails on time.

What is measured: ``agents.runtime.step.step_run`` for one step of a run whose transcript already
holds 200 messages (100 assistant tool calls with their results), against the loopback fake provider
answering at once. **Overhead** = the step's wall time minus the time spent inside the official SDK's
request (steps stream their call: from opening the stream through the SDK, i.e. its serialisation, the
HTTP round trip and the fake's work, to its last chunk, counting only the time spent inside the SDK's
iterator, which any caller of the SDK pays), i.e. claim, reading the
run and transcript, snippet selection, skill block, governance check and its events, redaction of every
part, assembly, fit, recording the step and the message, calibration and releasing the run.
``overhead`` is the usual case: the run's previous step ran in this worker, so its transcript is held
and the earlier messages' token counts are cached, as that step left them; ``cold`` is a step whose
worker has never seen the run: it reads the whole transcript from the database and counts every
message. ``CPU`` is the usual case's overhead in the stepping thread's CPU time
(``time.thread_time``): it leaves out the time the thread waited for a core, so it holds steadier
than the wall time on a busy machine (the PostgreSQL server's own work, in its process, is not in it).

Peers in the same run, on the same 200-message request:
* ``sdk_call``: the provider call alone (the official ``openai`` SDK to the fake), i.e. what a caller
  with no assembly, governance or persistence pays per step at minimum;
* ``langchain_trim``: LangChain ``trim_messages`` with a tiktoken counter on the same messages, i.e.
  what fitting alone costs a LangChain agent per step (no governance, no persistence).

Each database mode runs in a child process with its own settings (``DATABASE_URL``); PostgreSQL is
skipped (and said so) when unreachable. Target: overhead ≤ 15 ms median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import fake_model  # noqa: E402 - the path above makes the project importable

PG_URL = os.environ.get("SERVICES_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/govctx")
STEPS = 10
CALLS_PER_STEP = 19
TRANSCRIPT_MESSAGES = STEPS * (1 + CALLS_PER_STEP)  # 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    runs = 15 if args.quick else 60
    if args.child:
        print(json.dumps(measure(args.child, runs)))
        return
    results = {}
    for mode in ("sqlite", "postgresql"):
        results[mode] = spawn(mode, args.quick)
    report(results, runs)


def spawn(mode: str, quick: bool) -> dict[str, Any]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    env.pop("REDIS_URL", None)  # tasks are driven directly; no broker needed
    if mode == "sqlite":
        env["DATABASE_URL"] = f"sqlite:////tmp/step-overhead-{uuid.uuid4().hex}.sqlite3"
    else:
        name = f"bench_step_{uuid.uuid4().hex[:8]}"
        if not _pg_create(name):
            return {"skipped": "PostgreSQL unreachable"}
        env["DATABASE_URL"] = PG_URL.rsplit("/", 1)[0] + "/" + name
    command = [sys.executable, __file__, "--child", mode] + (["--quick"] if quick else [])
    try:
        out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    finally:
        if mode == "postgresql":
            _pg_drop(env["DATABASE_URL"].rsplit("/", 1)[1])
        elif env["DATABASE_URL"].startswith("sqlite:////"):
            Path(env["DATABASE_URL"][len("sqlite:///") :]).unlink(missing_ok=True)
    if out.returncode != 0:
        raise SystemExit(f"{mode} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pg_admin() -> Any:
    import psycopg

    base = PG_URL.rsplit("/", 1)[0] + "/postgres"
    return psycopg.connect(base, autocommit=True, connect_timeout=3)


def _pg_create(name: str) -> bool:
    try:
        with _pg_admin() as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return True
    except Exception:
        return False


def _pg_drop(name: str) -> None:
    with _pg_admin() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- the child: one database mode ------------------------------------------------------------------


def measure(mode: str, runs: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from tests.fakes.provider_server import FakeProvider

    with FakeProvider(default_reply="Done.") as fake:
        configuration = _configuration(fake)
        cold_ids = [_run_with_transcript(configuration) for _ in range(runs + 3)]
        cold_overhead, _, _, _ = _time_steps(cold_ids)
        warm_ids = [_run_with_transcript(configuration) for _ in range(runs + 3)]
        _warm_transcripts(warm_ids)
        overhead, provider, total, overhead_cpu = _time_steps(warm_ids)
        peers = _peers(fake, warm_ids[0])
    return {
        "mode": mode,
        "n": runs,
        "overhead_ms": _summary(overhead[3:]),
        "cold_overhead_ms": _summary(cold_overhead[3:]),
        "overhead_cpu_ms": _summary(overhead_cpu[3:]),
        "provider_ms": _summary(provider[3:]),
        "step_ms": _summary(total[3:]),
        **peers,
    }


def _warm_transcripts(run_ids: list[str]) -> None:
    """As if each run's previous step ran in this worker: the transcript is held, and its messages
    were assembled and fitted once (so their digests and token counts are cached, as they would be)."""
    from agents.models import AgentRun
    from agents.runtime.transcript import run_send
    from context_assembly.estimator import Estimator
    from context_assembly.fitting import fit

    for run in AgentRun.objects.select_related("configuration").filter(id__in=run_ids):
        _, plan = run_send(run)
        fit(plan.assembled, estimator=Estimator(plan.profile))


def _configuration(fake: Any) -> Any:
    from catalog.models import Configuration

    model = fake_model(fake, trust_zone="local")
    return Configuration.objects.create(
        identifier="bench",
        name="Bench",
        model=model,
        system_prompt="You help editors. " * 30,
        system_prompt_data_class="public_content",
        system_prompt_ceiling="external_global",
        snippet_tags=["tone"],
        allowed_tool_groups=["content"],
        max_iterations=20,
    )


def _run_with_transcript(configuration: Any) -> str:
    """A run at step ``STEPS`` whose transcript holds 200 messages: each earlier step is an assistant
    message with ``CALLS_PER_STEP`` tool calls followed by their results."""
    from agents.models import AgentRun, AgentStep, RunMessage
    from agents.runtime.pins import configuration_pins_take
    from snippets.selectors import snippet_select

    # Pinned as run_create pins a run: every step builds its context from these versions.
    snippets = snippet_select(tags=configuration.snippet_tags).snippets
    run = AgentRun.objects.create(
        configuration=configuration,
        input_text="Summarise the findings.",
        input_data_class="public_content",
        # A client's run in the least trusted zone: every step is also gated for its receiver.
        receiver_zone="external_global",
        next_step_index=STEPS,
        pins=configuration_pins_take(configuration=configuration, snippets=snippets, request_skills=()),
    )
    messages, steps, position = [], [], 0
    for step in range(STEPS):
        calls = [
            {
                "id": f"call_{step}_{n}",
                "name": "snippets_by_tag",
                "arguments": json.dumps({"tags": ["tone"], "page": n}),
            }
            for n in range(CALLS_PER_STEP)
        ]
        messages.append(
            RunMessage(
                run=run,
                position=position,
                step_index=step,
                role="assistant",
                content="",
                tool_calls=calls,
                # Its reply's labels, as a recorded step stores them (decision 0018).
                data_class="editor_content",
                receiver_class="editor_content",
            )
        )
        position += 1
        for n, call in enumerate(calls):
            messages.append(
                RunMessage(
                    run=run,
                    position=position,
                    step_index=step,
                    role="tool",
                    content=f"Result {step}.{n}: " + "a finding worth keeping. " * 12,
                    tool_call_id=call["id"],
                    tool_name="snippets_by_tag",
                    data_class="editor_content",
                )
            )
            position += 1
        steps.append(
            AgentStep(
                run=run,
                index=step,
                status="completed",
                usage_provenance="estimated",
                estimated_prompt_tokens=1000 + step,
            )
        )
    assert len(messages) == TRANSCRIPT_MESSAGES
    RunMessage.objects.bulk_create(messages)
    AgentStep.objects.bulk_create(steps)
    return str(run.id)


def _time_steps(run_ids: list[str]) -> tuple[list[float], list[float], list[float], list[float]]:
    """Per step: overhead, provider and total wall time, and the overhead in this thread's CPU time."""
    from agents.runtime.step import step_run
    from providers.openai_compatible import OpenAICompatibleAdapter

    original = OpenAICompatibleAdapter._open_stream
    provider_seconds: list[tuple[float, float]] = []  # (wall, this thread's CPU) inside the SDK

    def timed(self: Any, call: Any, body: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        deltas, close = original(self, call, body)
        inside, inside_cpu = time.perf_counter() - start, time.thread_time() - cpu

        def timed_deltas() -> Any:
            # Timed until the reader stops: at the stream's end, or when it closes the stream after
            # the delta that ends the reply (a usage chunk may end it before the server's [DONE]).
            nonlocal inside, inside_cpu
            iterator = iter(deltas)
            try:
                while True:
                    start, cpu = time.perf_counter(), time.thread_time()
                    try:
                        delta = next(iterator)
                    except StopIteration:
                        return
                    finally:
                        inside += time.perf_counter() - start
                        inside_cpu += time.thread_time() - cpu
                    yield delta
            finally:
                provider_seconds.append((inside, inside_cpu))

        return timed_deltas(), close

    OpenAICompatibleAdapter._open_stream = timed  # type: ignore[method-assign]
    overhead, provider, total, overhead_cpu = [], [], [], []
    try:
        for run_id in run_ids:
            calls = len(provider_seconds)
            start, cpu = time.perf_counter(), time.thread_time()
            outcome = step_run(run_id=run_id, step_index=STEPS, worker="bench")
            elapsed, elapsed_cpu = time.perf_counter() - start, time.thread_time() - cpu
            if outcome.reason != "completed" or len(provider_seconds) != calls + 1:
                raise SystemExit(
                    f"step did not complete with one provider call: {outcome} "
                    f"({len(provider_seconds) - calls} calls)"
                )
            wall, provider_cpu = provider_seconds[-1]
            total.append(elapsed * 1000)
            provider.append(wall * 1000)
            overhead.append((elapsed - wall) * 1000)
            overhead_cpu.append((elapsed_cpu - provider_cpu) * 1000)
    finally:
        OpenAICompatibleAdapter._open_stream = original  # type: ignore[method-assign]
    return overhead, provider, total, overhead_cpu


def _peers(fake: Any, run_id: str) -> dict[str, Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.messages.utils import trim_messages
    from openai import OpenAI

    from agents.models import AgentRun
    from agents.runtime.transcript import run_send
    from context_assembly.encodings import get_encoding

    run = AgentRun.objects.select_related("configuration").get(id=run_id)
    _, plan = run_send(run)
    wire = [m.to_openai() for m in plan.assembled.messages]
    client = OpenAI(base_url=fake.openai_base_url, api_key="bench", max_retries=0)
    sdk = []
    for _ in range(20):
        start = time.perf_counter()
        client.chat.completions.create(model="gpt-4o", messages=wire, max_tokens=100)
        sdk.append((time.perf_counter() - start) * 1000)
    encoding = get_encoding("o200k_base")
    kinds = {"system": SystemMessage, "user": HumanMessage}
    lc = []
    for message in wire:
        if message["role"] == "assistant":
            calls = [
                {"id": c["id"], "name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
                for c in message.get("tool_calls", [])
            ]
            lc.append(AIMessage(content=message["content"] or "", tool_calls=calls))
        elif message["role"] == "tool":
            lc.append(ToolMessage(content=message["content"], tool_call_id=message["tool_call_id"]))
        else:
            lc.append(kinds[message["role"]](content=message["content"]))

    def counter(messages: list[Any]) -> int:
        return sum(3 + len(encoding.encode(str(m.content))) for m in messages) + 3

    trims = []
    for _ in range(10):
        start = time.perf_counter()
        trim_messages(
            lc,
            max_tokens=107_776,
            token_counter=counter,
            strategy="last",
            include_system=True,
            start_on="human",
        )
        trims.append((time.perf_counter() - start) * 1000)
    return {"sdk_call_ms": _summary(sdk[2:]), "langchain_trim_ms": _summary(trims[1:]), "messages": len(wire)}


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 3),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
        "n": len(ordered),
    }


def report(results: dict[str, dict[str, Any]], runs: int) -> None:
    print(f"Per-step overhead at a {TRANSCRIPT_MESSAGES}-message transcript (medians, ms; target ≤ 15)")
    print(
        f"{'mode':<11} {'overhead':>9} {'p90':>8} {'CPU':>7} {'cold':>8} {'step':>8} {'provider':>9} "
        f"{'sdk call':>9} {'LC trim':>9}"
    )
    summary: dict[str, Any] = {"benchmark": "step_overhead", "transcript_messages": TRANSCRIPT_MESSAGES}
    for mode, data in results.items():
        if "skipped" in data:
            print(f"{mode:<11} skipped: {data['skipped']}")
            summary[mode] = data
            continue
        o, s = data["overhead_ms"], data["step_ms"]
        print(
            f"{mode:<11} {o['median']:>9.2f} {o['p90']:>8.2f} {data['overhead_cpu_ms']['median']:>7.2f} "
            f"{data['cold_overhead_ms']['median']:>8.2f} {s['median']:>8.2f} {data['provider_ms']['median']:>9.2f} "
            f"{data['sdk_call_ms']['median']:>9.2f} {data['langchain_trim_ms']['median']:>9.2f}"
        )
        data["overhead_vs_langchain_trim"] = round(o["median"] / data["langchain_trim_ms"]["median"], 3)
        data["overhead_vs_sdk_call"] = round(o["median"] / data["sdk_call_ms"]["median"], 3)
        data["meets_target"] = o["median"] <= 15
        print(
            f"{'':<11} overhead / LangChain trim alone = {data['overhead_vs_langchain_trim']:.2f}; "
            f"overhead / bare SDK call = {data['overhead_vs_sdk_call']:.2f}"
        )
        summary[mode] = data
    print(json.dumps(summary, separators=(",", ":")))


if __name__ == "__main__":
    main()
