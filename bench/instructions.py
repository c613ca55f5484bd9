"""Instructions a governed step and a gateway request execute, counted by callgrind.

Run: ``.venv/bin/python bench/instructions.py [--keep DIR]`` (``make bench-instructions``). Prints a
table in millions of instructions and one JSON line (``{"benchmark": "instructions", ...}``). Valgrind
runs the measured processes about fifty times slower, so this is not part of ``make bench`` or
``make bench-quick``. Without ``valgrind`` and ``callgrind_control`` it says so and exits 0.

Wall and CPU times on a shared machine move by 10-30% from run to run; a count of instructions does
not (the same code counted twice agrees within 0.3%). Each measured process runs under ``valgrind
--tool=callgrind --instr-atstart=no``, so nothing is counted while it starts, migrates or warms up;
``callgrind_control -i on`` switches counting on just before the measured calls, ``-i off`` after,
and each section is dumped on its own. The fake providers run in this process, so their work is never
counted. Each section is ``COUNT`` calls after ``WARM_UP`` uncounted ones:

* ``step``: ``agents.runtime.step.step_run``, one step of a run whose transcript holds 200 messages,
  its client in ``external_global``, set up as ``bench/step_overhead.py`` sets it up (transcript held,
  token counts cached, as the run's previous step in the same worker left them);
* ``sdk_call``: the same provider call made alone through the official ``openai`` SDK in the same
  process: the request the step sent (as the fake received it), posted as the step's adapter posts it
  (the client's ``post``, streamed, without ``create()``'s transform of every message), read to its end;
* ``gateway_whole``, ``gateway_stream``: a chat completion through ``/api/openai/v1`` (the 50-message
  conversation of ``bench/gateway.py``), whole and streamed, counted in the server process (Django's
  threaded WSGI server: Django's side of the request, its provider call included);
* ``gateway_asgi_whole``, ``gateway_asgi_stream``: the same under uvicorn serving ``config.asgi`` (the
  production stack, as ``bench/gateway.py``'s ``gateway_asgi`` peer runs it; every thread of the
  process counted). A count leaves out the kernel's work, so it does not see what a hand-over
  between the event loop and a request thread costs in wake-ups.

* ``worker_step``, ``worker_sdk_call`` (with PostgreSQL and Redis, as ``bench/concurrency.py`` finds
  them: ``DATABASE_URL``, ``REDIS_URL``; left out, and said so, without them): a run of
  ``bench/concurrency.py``'s batch (a tool call, then the answer) stepped as its pooled workers step
  it, on a database of its own with the connection pool, each step's next one enqueued to Redis, the
  mean of its two steps; and the same two provider calls made alone through the SDK, the mean of the
  two, as its floor makes them. ``worker_step_overhead`` is their difference: what the service adds
  to a step, counted (the batch's worker CPU per step moves by 10-20% with the machine's load).

The step's **overhead** is ``step - sdk_call``. ``--keep DIR`` keeps each section's callgrind file
(``<section>.callgrind``) for ``callgrind_annotate``, to find where two trees' counts differ.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COUNT = 20
WARM_UP = 3
QUIET = {
    # No periodic thread may wake while a section is counted: its work would be counted with it.
    "AGENT_STEP_LEASE_SECONDS": "172800",
    "AGENT_STEP_LEASE_RENEW_SECONDS": "86400",
    "AGENT_REAPER_INTERVAL_SECONDS": "86400",
    "GOVERNANCE_LOG_ANCHOR_SECONDS": "86400",
    "API_RATE_LIMIT": "1000000/min",
    "LOG_LEVEL": "WARNING",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the callgrind files in DIR")
    parser.add_argument("--setup", choices=["step", "gateway", "worker"], help=argparse.SUPPRESS)
    parser.add_argument("--fake-url", help=argparse.SUPPRESS)
    parser.add_argument("--step-child", type=Path, metavar="BODY", help=argparse.SUPPRESS)
    parser.add_argument("--worker-child", type=Path, metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-asgi", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.setup:
        print(json.dumps(_setup(args.setup, args.fake_url)))
    elif args.step_child:
        _step_child(args.step_child, args.fake_url)
    elif args.worker_child:
        _worker_child(args.worker_child, args.fake_url)
    elif args.serve:
        _serve(args.serve)
    elif args.serve_asgi:
        _serve_asgi(args.serve_asgi)
    else:
        missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
        if missing:
            print(f"instructions benchmark skipped: {', '.join(missing)} not installed")
            print(json.dumps({"benchmark": "instructions", "skipped": f"{missing} not installed"}))
            return
        report(measure(args.keep))


# --- the parent: the fake provider, the set-up, the switches --------------------------------------------


def measure(keep: Path | None) -> dict[str, int]:
    """The step's and the gateway's sections, each in its own processes with its own fake provider,
    side by side (a count does not depend on what else the machine runs)."""
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as work:
        directory = Path(work)
        env = {**os.environ, **QUIET, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
        env.pop("REDIS_URL", None)  # the embedded mode: tasks are driven directly, no broker
        with ThreadPoolExecutor(max_workers=3) as pool:
            parts = [
                pool.submit(
                    _with_fake, part, directory, {**env, "DATABASE_URL": f"sqlite:///{directory / name}"}
                )
                for part, name in ((_measure_step, "step.sqlite3"), (_measure_gateway, "gateway.sqlite3"))
            ]
            parts.append(pool.submit(_measure_worker, directory, env))
            counts = {section: count for part in parts for section, count in part.result().items()}
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for section in counts:
                shutil.copy(directory / f"{section}.callgrind", keep / f"{section}.callgrind")
    return counts


def _with_fake(part: Any, directory: Path, env: dict[str, str]) -> dict[str, int]:
    from tests.fakes.provider_server import FakeProvider

    with FakeProvider() as fake:  # one per part: each sets the replies its section needs
        return dict(part(fake, directory, env))


def _setup_in_child(kind: str, fake: Any, env: dict[str, str]) -> dict[str, Any]:
    """The database migrated and set up for ``kind`` by a process of its own, not under valgrind."""
    command = [sys.executable, __file__, "--setup", kind, "--fake-url", fake.openai_base_url]
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{kind} set-up failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _valgrind(directory: Path, name: str, *arguments: str) -> list[str]:
    out = directory / f"{name}.callgrind"
    callgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    return [*callgrind, sys.executable, __file__, *arguments]


class Counter:
    """Switches a process's instrumentation on and off, and dumps each section to its own file."""

    def __init__(self, pid: int, directory: Path, name: str) -> None:
        self.pid, self.directory, self.name, self.dumps = pid, directory, name, 0

    def control(self, *options: str) -> None:
        subprocess.run(["callgrind_control", *options, str(self.pid)], check=True, capture_output=True)

    def on(self) -> None:
        self.control("-i", "on")

    def off(self, section: str) -> int:
        """Instrumentation off, the section dumped (which zeroes the counters); its count."""
        self.control("-i", "off")
        self.control(f"--dump={section}")
        self.dumps += 1
        dump = self.directory / f"{self.name}.callgrind.{self.dumps}"
        deadline = time.monotonic() + 120
        while not (dump.exists() and "\ntotals:" in dump.read_text()):
            if time.monotonic() > deadline:
                raise SystemExit(f"no callgrind dump {dump}")
            time.sleep(0.2)
        totals = dump.read_text().split("\ntotals:")[1].split()[0]
        dump.rename(self.directory / f"{section}.callgrind")
        return int(totals)

    def section(self, child: subprocess.Popen[str], name: str, dump: str | None = None) -> int:
        """One section of a measured process that runs :func:`_counted`: once it is ready, counting on
        while it runs its calls, then off and dumped (as ``dump``, default ``name``); its count. The
        process then waits for the caller's ``next``."""
        assert child.stdin is not None and child.stdout is not None
        _expect(child.stdout, f"ready {name}")
        self.on()
        _say(child.stdin, "go")
        _expect(child.stdout, f"done {name}")
        return self.off(dump or name)


def _measure_step(fake: Any, directory: Path, env: dict[str, str]) -> dict[str, int]:
    fake.default_reply = "Done."
    runs = _setup_in_child("step", fake, env)["runs"]
    (directory / "runs.json").write_text(json.dumps(runs))
    body = directory / "body.json"

    def sent() -> None:  # the request the step sent, for the SDK to send alone
        body.write_text(json.dumps(fake.requests[-1].body))

    arguments = ("--step-child", str(body), "--fake-url", fake.openai_base_url)
    return _sections_counted(directory, env, "step", arguments, ("step", "sdk_call"), sent, timeout=600)


def _sections_counted(
    directory: Path,
    env: dict[str, str],
    name: str,
    arguments: tuple[str, ...],
    sections: tuple[str, str],
    between: Callable[[], None],
    *,
    timeout: float,
) -> dict[str, int]:
    """A process of this file run with ``arguments`` under valgrind, which counts its two
    ``sections`` in turn (each through :func:`_counted`); ``between()`` runs after the first."""
    child = subprocess.Popen(
        _valgrind(directory, f"{name}_process", *arguments),
        env=env,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    counter = Counter(child.pid, directory, f"{name}_process")
    counts = {}
    with ends_well(child, f"the {name} process", timeout=timeout):
        for section in sections:
            counts[section] = counter.section(child, section)
            if section == sections[0]:
                between()
            _say(child.stdin, "next")
    return counts


def _measure_worker(directory: Path, env: dict[str, str]) -> dict[str, int]:
    """The worker sections on a PostgreSQL database of their own (created and dropped here) and
    ``REDIS_URL``'s database (held, and its queue emptied of the steps' enqueued next steps); none
    when either service is unreachable."""
    from bench import _common as common
    from bench.concurrency import STEPS, pooled_setting, step_bodies

    database_url, redis_url, problem = common.services_from_environment()
    if problem:
        print(f"instructions benchmark: the worker sections left out: {problem}")
        return {}
    services = common.Services(database_url, redis_url, f"bench_instructions_{os.getpid()}")
    # The database and pool of bench/concurrency.py's pooled workers.
    env = {
        **env,
        **pooled_setting(concurrency=256).env,
        "DATABASE_URL": services.bench_url,
        "REDIS_URL": redis_url,
    }
    with (
        common.bench_database(services),
        common.redis_database_held(redis_url, "instructions"),
        common.step_scripted_provider(STEPS)() as fake,
    ):
        runs = _setup_in_child("worker", fake, env)["runs"]
        (directory / "worker-runs.json").write_text(json.dumps(runs))

        def sent() -> None:  # the bodies the steps sent, one per step index, for the SDK alone
            (directory / "worker-bodies.json").write_text(json.dumps(step_bodies(fake)))

        arguments = ("--worker-child", str(directory), "--fake-url", fake.openai_base_url)
        sections = ("worker_step", "worker_sdk_call")
        counts = _sections_counted(directory, env, "worker", arguments, sections, sent, timeout=900)
    return counts


@contextmanager
def ends_well(child: subprocess.Popen[str], what: str, *, timeout: float) -> Iterator[None]:
    """The block drives ``child``, which must then exit with 0 within ``timeout`` seconds; killed if
    the block fails or it does not exit."""
    try:
        yield
        if child.wait(timeout=timeout) != 0:
            raise SystemExit(f"{what} failed")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _measure_gateway(fake: Any, directory: Path, env: dict[str, str]) -> dict[str, int]:
    """The gateway's sections, under Django's WSGI server and then under uvicorn, on one database."""
    configuration = _setup_in_child("gateway", fake, env)
    counts = {}
    for prefix, serve in (("gateway", "--serve"), ("gateway_asgi", "--serve-asgi")):
        counts.update(_measure_server(fake, directory, env, configuration, prefix, serve))
    return counts


def _measure_server(
    fake: Any, directory: Path, env: dict[str, str], configuration: dict[str, Any], prefix: str, serve: str
) -> dict[str, int]:
    import openai

    from bench.gateway import _conversation
    from tests.fakes.provider_server import Reply

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    name = f"{prefix}_process"
    server = subprocess.Popen(_valgrind(directory, name, serve, str(port)), env=env, cwd=ROOT)
    counter = Counter(server.pid, directory, name)
    url = f"http://127.0.0.1:{port}/api/openai/v1"
    client = openai.OpenAI(base_url=url, api_key=configuration["token"], max_retries=0, timeout=600)
    messages: Any = _conversation()  # the SDK types its messages; these are plain dicts
    model = configuration["model"]

    def whole() -> None:
        client.chat.completions.create(model=model, messages=messages)

    def streamed() -> None:
        with client.chat.completions.create(model=model, messages=messages, stream=True) as stream:
            if not "".join(c.choices[0].delta.content or "" for c in stream if c.choices):
                raise SystemExit("a streamed completion ended without content")

    counts = {}
    try:
        _wait_listening(server, port)
        for section, call, reply in (
            (f"{prefix}_whole", whole, "Done."),
            (f"{prefix}_stream", streamed, Reply(text="A streamed answer in several pieces.")),
        ):
            fake.default_reply = reply
            for _ in range(WARM_UP):
                call()
            counter.on()
            for _ in range(COUNT):
                call()
            counts[section] = counter.off(section)
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=120)
    return counts


def _wait_listening(server: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 600
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the gateway under valgrind did not start") from None
            time.sleep(0.5)


def _say(stream: IO[str], line: str) -> None:
    stream.write(line + "\n")
    stream.flush()


def _expect(stream: IO[str], line: str) -> None:
    got = stream.readline().strip()
    if got != line:
        raise SystemExit(f"the measured process said {got!r}, not {line!r}")


# --- the set-up (not counted) ---------------------------------------------------------------------------


def _setup(kind: str, fake_url: str) -> dict[str, Any]:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    fake = SimpleNamespace(openai_base_url=fake_url)
    if kind == "worker":
        from bench._common import create_runs
        from bench.throughput import bench_configuration

        ids, _ = create_runs(bench_configuration(fake), WARM_UP + COUNT)
        return {"runs": ids}
    if kind == "step":
        from bench.step_overhead import _configuration, _run_with_transcript

        configuration = _configuration(fake)
        return {"runs": [_run_with_transcript(configuration) for _ in range(WARM_UP + COUNT)]}
    from bench.gateway import _configuration as gateway_configuration

    model, token = gateway_configuration(fake)
    return {"model": model, "token": token}


# --- the measured processes (under valgrind) ------------------------------------------------------------


def _counted(name: str, calls: Callable[[], None]) -> None:
    """Tell the parent ``name`` is ready, run ``calls`` once it has switched counting on, say so
    and wait until it has switched counting off and dumped."""
    _say(sys.stdout, f"ready {name}")
    sys.stdin.readline()
    calls()
    _say(sys.stdout, f"done {name}")
    sys.stdin.readline()


def _step_child(body_path: Path, fake_url: str) -> None:
    import django

    django.setup()
    from agents.runtime.step import step_run
    from bench.step_overhead import STEPS, _warm_transcripts

    runs = json.loads((body_path.parent / "runs.json").read_text())
    _warm_transcripts(runs)

    def step(run_id: str) -> None:
        outcome = step_run(run_id=run_id, step_index=STEPS, worker="bench")
        if outcome.reason != "completed":
            raise SystemExit(f"a step did not complete: {outcome}")

    _each_counted("step", runs, step)
    # What the step's adapter sends (providers/openai_compatible.py, _streamed).
    _sdk_calls_counted("sdk_call", fake_url, [json.loads(body_path.read_text())])


def _worker_child(directory: Path, fake_url: str) -> None:
    """Each run's two steps as a pooled worker runs them (``step_run``, the tool call's next step
    enqueued to Redis), then each step's request alone through the SDK; the enqueued steps are purged
    from the broker at the end."""
    import django

    django.setup()
    from agents.runtime.step import step_run
    from bench.concurrency import STEPS
    from config.celery import app
    from config.startup import startup_objects_frozen

    startup_objects_frozen()  # as a worker does when it starts (config/celery.py)
    runs = json.loads((directory / "worker-runs.json").read_text())

    def stepped(run_id: str) -> None:
        for index in range(STEPS):
            outcome = step_run(run_id=run_id, step_index=index, worker="bench")
            if outcome.action not in ("advanced", "finished") or (
                index == STEPS - 1 and outcome.reason != "completed"
            ):
                raise SystemExit(f"step {index} of run {run_id} did not complete: {outcome}")

    _each_counted("worker_step", runs, stepped)
    # As bench/_floor_worker.py's step calls the provider.
    _sdk_calls_counted(
        "worker_sdk_call", fake_url, json.loads((directory / "worker-bodies.json").read_text())
    )
    app.control.purge()  # the next steps the tool calls enqueued: no worker takes them


def _each_counted(name: str, runs: list[str], each: Callable[[str], None]) -> None:
    """``each`` of the first :data:`WARM_UP` runs uncounted, then of the rest as section ``name``."""
    for run_id in runs[:WARM_UP]:
        each(run_id)

    def rest() -> None:
        for run_id in runs[WARM_UP:]:
            each(run_id)

    _counted(name, rest)


def _sdk_calls_counted(name: str, fake_url: str, bodies: list[dict[str, Any]]) -> None:
    """Each of ``bodies`` posted through the official SDK :data:`WARM_UP` times uncounted, then :data:`COUNT` times as
    section ``name``: the body as is through the client's generic ``post``, streamed, every event
    read, as the adapters send it."""
    from openai import OpenAI, Stream
    from openai.types.chat import ChatCompletion

    client = OpenAI(base_url=fake_url, api_key="bench", max_retries=0)

    def call(body: dict[str, Any]) -> None:
        stream = client.post(
            "/chat/completions",
            body=body,
            cast_to=ChatCompletion,
            options={"security": {"bearer_auth": True}},
            stream=True,
            stream_cls=Stream[object],
        )
        with stream:
            for _ in stream:
                pass

    for _ in range(WARM_UP):
        for body in bodies:
            call(body)

    def calls() -> None:
        for _ in range(COUNT):
            for body in bodies:
                call(body)

    _counted(name, calls)


def _serve(port: int) -> None:
    """The WSGI application as ``bench/gateway.py`` serves it; the main thread sleeps until a client
    connects, and the database connection is kept (not reopened after 60 s of wall clock)."""
    import django

    django.setup()
    from django.conf import settings

    settings.DATABASES["default"]["CONN_MAX_AGE"] = None
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.utils.module_loading import import_string

    class QuietHandler(WSGIRequestHandler):
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", port), QuietHandler, allow_reuse_address=True)
    server.set_app(import_string(settings.WSGI_APPLICATION))
    server.serve_forever(poll_interval=None)  # type: ignore[arg-type]  # select() waits for as long


def _serve_asgi(port: int) -> None:
    """``config.asgi`` under uvicorn as ``bench/gateway.py`` serves it (``httptools`` and ``uvloop``), the
    request threads' SQLite connections kept (not reopened after 60 s of wall clock)."""
    import django

    django.setup()
    from django.conf import settings

    settings.DATABASES["default"]["CONN_MAX_AGE"] = None
    import uvicorn

    uvicorn.run("config.asgi:application", host="127.0.0.1", port=port, log_level="warning", lifespan="off")


# --- the report -----------------------------------------------------------------------------------------


def report(counts: dict[str, int]) -> None:
    # The worker sections count two steps, or two calls, a run.
    per = {
        section: total / COUNT / (2 if section.startswith("worker") else 1) / 1e6
        for section, total in counts.items()
    }
    rows = (
        ("step_overhead", "step overhead, 200-message transcript, client in external_global"),
        ("step", "  the step"),
        ("sdk_call", "  the same provider call alone through the SDK"),
        ("gateway_whole", "gateway, whole chat completion"),
        ("gateway_stream", "gateway, streamed chat completion"),
        ("gateway_asgi_whole", "gateway under uvicorn, whole chat completion"),
        ("gateway_asgi_stream", "gateway under uvicorn, streamed chat completion"),
        ("worker_step_overhead", "worker step overhead, PostgreSQL and Redis (bench/concurrency.py)"),
        ("worker_step", "  a step of a run of the batch, as the pooled workers run it"),
        ("worker_sdk_call", "  the same provider call alone through the SDK, as the floor makes it"),
    )
    figures = {**per, "step_overhead": per["step"] - per["sdk_call"]}
    if "worker_step" in per:
        figures["worker_step_overhead"] = per["worker_step"] - per["worker_sdk_call"]
    rows = tuple((name, label) for name, label in rows if name in figures)
    print(f"Instructions per step or request (M, {COUNT} each)")
    for name, label in rows:
        print(f"{label:<68}{figures[name]:>9.2f}")
    result = {name: round(figures[name], 3) for name, _ in rows}
    print(json.dumps({"benchmark": "instructions", "count": COUNT, "m_instructions": result}))


if __name__ == "__main__":
    main()
