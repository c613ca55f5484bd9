"""What the worker benchmarks (``bench/throughput.py``, ``bench/concurrency.py``) and the in-process
ones (``bench/gateway.py``, ``bench/step_overhead.py``) share: the services and a dedicated database,
Celery workers, runs and their checks, the step-scripted fake provider, a configuration's fake model.

Not a benchmark itself (the Makefile runs only ``bench/[a-z]*.py``). Imported after the benchmark has
put the project root on ``sys.path``; project modules are imported inside the functions, after Django
is set up.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/govctx"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
WORKERS = 2
_request = threading.local()


# --- services ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Services:
    database_url: str
    redis_url: str
    bench_database: str

    @property
    def bench_url(self) -> str:
        parts = urlsplit(self.database_url)
        return urlunsplit(parts._replace(path=f"/{self.bench_database}"))


def services_problem(database_url: str, redis_url: str) -> str | None:
    import psycopg
    import redis

    try:
        with psycopg.connect(admin_dsn(database_url), connect_timeout=3):
            pass
    except Exception as exc:
        return f"PostgreSQL unreachable: {type(exc).__name__}"
    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
    except Exception as exc:
        return f"Redis unreachable: {type(exc).__name__}"
    return None


def admin_dsn(database_url: str) -> str:
    return urlunsplit(urlsplit(database_url)._replace(scheme="postgresql", path="/postgres"))


def _admin_execute(database_url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(admin_dsn(database_url), autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # the name is generated here, never user input


@contextmanager
def bench_database(services: Services) -> Iterator[None]:
    _admin_execute(services.database_url, f'CREATE DATABASE "{services.bench_database}"')
    try:
        yield
    finally:
        from django.conf import settings

        # This process's own connections to it; a parent of the measured processes has none.
        if settings.configured:
            from django.db import connections

            connections.close_all()
        _admin_execute(
            services.database_url, f'DROP DATABASE IF EXISTS "{services.bench_database}" WITH (FORCE)'
        )


def services_from_environment() -> tuple[str, str, str | None]:
    """``DATABASE_URL`` and ``REDIS_URL`` (defaults matching the Makefile's ``SERVICES_*``), and why a
    benchmark cannot use them (None when it can)."""
    database_url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    redis_url = os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    if not database_url.startswith("postgres"):
        return database_url, redis_url, "DATABASE_URL does not point at PostgreSQL"
    return database_url, redis_url, services_problem(database_url, redis_url)


def run_on_services(benchmark: str, body: Callable[[Services, Path], int]) -> int:
    """``body(services, log_dir)`` (its exit status) on a dedicated database, created on the server of
    ``DATABASE_URL`` (PostgreSQL) and dropped after, with Django set up on it and ``REDIS_URL``. When
    either is unreachable the benchmark is skipped (exit 0, a message and a ``skipped`` JSON line)
    unless ``REQUIRE_SERVICES=1`` (exit 1)."""
    database_url, redis_url, problem = services_from_environment()
    if problem:
        required = os.environ.get("REQUIRE_SERVICES") == "1"
        print(f"{benchmark} benchmark {'cannot run' if required else 'skipped'}: {problem}")
        print(json.dumps({"benchmark": benchmark, "skipped": problem}))
        return 1 if required else 0
    name = urlsplit(database_url).path.lstrip("/") or "govctx"
    services = Services(database_url, redis_url, f"{name}_bench_{os.getpid()}")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=services.bench_url, REDIS_URL=redis_url
    )
    with (
        redis_database_held(redis_url, benchmark),
        tempfile.TemporaryDirectory(prefix=f"bench-{benchmark}-") as logs,
        bench_database(services),
    ):
        import django

        django.setup()
        return body(services, Path(logs))


REDIS_HELD_KEY = "govctx-bench-running"


@contextmanager
def redis_database_held(redis_url: str, benchmark: str) -> Iterator[None]:
    """Hold ``redis_url``'s database for one benchmark at a time. The database on PostgreSQL is the
    run's own (its name ends in the process id), but the Celery queues and the floor's counters live
    in the Redis database ``REDIS_URL`` names: two runs sharing it would take each other's tasks. A
    second run stops at once, naming the run that holds it; give each its own database number."""
    import redis

    store = redis.Redis.from_url(redis_url)
    holder = f"{benchmark} (pid {os.getpid()} on {socket.gethostname()})"
    if not store.set(REDIS_HELD_KEY, holder, nx=True, ex=3600):
        held_by = (store.get(REDIS_HELD_KEY) or b"?").decode()
        if _gone(held_by):  # a run on this host that was killed before it could let go
            store.delete(REDIS_HELD_KEY)
            if store.set(REDIS_HELD_KEY, holder, nx=True, ex=3600):
                held_by = ""
        if held_by:
            raise SystemExit(
                f"{benchmark}: the Redis database of {redis_url} is in use by {held_by}; "
                "set REDIS_URL to a database of your own (redis://host:6379/<n>)"
            )
    try:
        yield
    finally:
        if (store.get(REDIS_HELD_KEY) or b"").decode() == holder:
            store.delete(REDIS_HELD_KEY)


def _gone(holder: str) -> bool:
    """Whether ``holder`` (as :func:`redis_database_held` writes it) names a process of this host that
    no longer runs."""
    match = re.search(r"\(pid (\d+) on (.+)\)$", holder)
    if match is None or match.group(2) != socket.gethostname():
        return False
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


# --- workers ----------------------------------------------------------------------------------------------


@contextmanager
def celery_workers(
    services: Services,
    *,
    concurrency: int,
    log_dir: Path,
    name: str = "bench",
    env: dict[str, str] | None = None,
    stop_seconds: float = 30,
    app: str = "config",
) -> Iterator[list[subprocess.Popen]]:
    """``WORKERS`` Celery worker processes of ``app`` (``--pool=threads``, ``concurrency`` threads each)
    on the benchmark's database and Redis, with ``env`` on top; stopped (killed after ``stop_seconds``)
    on exit. Each logs to ``<log_dir>/<name>-worker<n>.log``."""
    celery = Path(sys.executable).with_name("celery")
    worker_env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": services.bench_url,
        "REDIS_URL": services.redis_url,
        "LOG_LEVEL": "WARNING",
        **(env or {}),
    }
    processes = []
    try:
        for number in range(WORKERS):
            command = [str(celery), "-A", app, "worker", "--pool=threads"]
            command += [f"--concurrency={concurrency}", "--loglevel=WARNING", "-n", f"{name}{number}@%h"]
            command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
            log = (log_dir / f"{name}-worker{number}.log").open("w")
            processes.append(
                subprocess.Popen(
                    command,
                    cwd=ROOT,
                    env=worker_env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=stop_seconds)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def wait_ready(count: int, timeout: float = 60, app: Any = None) -> None:
    """Until ``count`` workers answer a ping through ``app`` (the project's Celery app by default)."""
    if app is None:
        from config.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=1.0) or []) >= count:
            return
    raise RuntimeError(f"the {count} workers did not answer a ping within {timeout:.0f}s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- runs -------------------------------------------------------------------------------------------------

ANSWER = "Done."


def step_scripted_provider(steps: int, *, latency: float = 0.0) -> type:
    """The class of a fake whose reply depends on the request: a tool call (``snippets_by_tag``) until
    ``steps - 1`` tool results are present, then :data:`ANSWER`; each after ``latency`` seconds.
    Deciding by the request means concurrent runs cannot take each other's replies."""
    from tests.fakes.provider_server import FakeProvider, Reply, ToolCall

    tool = Reply(tool_calls=(ToolCall("lookup", "snippets_by_tag", {"tags": ["tone"]}),), latency=latency)
    final = Reply(text=ANSWER, latency=latency)

    class StepScriptedProvider(FakeProvider):
        def _record(self, method, path, headers, raw):  # type: ignore[no-untyped-def]
            request = super()._record(method, path, headers, raw)
            _request.body = request.body  # the handler thread asks for its reply right after
            return request

        def _next_reply(self):  # type: ignore[no-untyped-def]
            messages = getattr(_request, "body", {}).get("messages") or []
            answered = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")
            return final if answered >= steps - 1 else tool

    return StepScriptedProvider


def create_runs(configuration: Any, count: int) -> tuple[list[str], float]:
    """Create ``count`` runs in one transaction; their first steps are enqueued when it commits.
    Returns the run ids and the wall-clock moment just before the commit."""
    from django.db import transaction

    from agents.services import run_create
    from governance.vocabulary import DataClass

    with transaction.atomic():
        ids = [
            str(
                run_create(
                    configuration=configuration,
                    input_text=f"Draft note {index} in our tone of voice.",
                    input_data_class=DataClass.PUBLIC_CONTENT,
                ).id
            )
            for index in range(count)
        ]
        committed = time.time()
    return ids, committed


def wait_terminal(ids: list[str], timeout: float) -> bool:
    from agents.models import AgentRun
    from agents.models.runs import TERMINAL_STATUSES

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if AgentRun.objects.filter(id__in=ids, status__in=TERMINAL_STATUSES).count() == len(ids):
            return True
        time.sleep(0.2)
    return False


def check_runs(ids: list[str], steps: int) -> list[str]:
    """Every run completed, each step index 0..steps-1 recorded once with one assistant message, and
    one tool result per recorded call. Returns the problems found (empty when all is well)."""
    from agents.models import AgentRun, AgentStep, RunMessage

    problems: list[str] = []
    statuses = AgentRun.objects.filter(id__in=ids).values_list("id", "status", "termination_reason")
    for run_id, status, reason in statuses:
        if (status, reason) != ("completed", "completed"):
            problems.append(f"run {run_id}: {status}/{reason}")
    step_rows = AgentStep.objects.filter(run_id__in=ids).values_list("run_id", "index")
    messages = RunMessage.objects.filter(run_id__in=ids).values_list("run_id", "step_index", "role")
    per_run: dict[str, list[int]] = {run_id: [] for run_id in ids}
    for run_id, index in step_rows:
        per_run[str(run_id)].append(index)
    assistants: dict[tuple[str, int], int] = {}
    tools: dict[str, int] = {}
    for run_id, index, role in messages:
        if role == "assistant":
            assistants[(str(run_id), index)] = assistants.get((str(run_id), index), 0) + 1
        elif role == "tool":
            tools[str(run_id)] = tools.get(str(run_id), 0) + 1
    for run_id, indices in per_run.items():
        if sorted(indices) != list(range(steps)):
            problems.append(f"run {run_id}: step indices {sorted(indices)}")
        if any(assistants.get((run_id, index), 0) != 1 for index in range(steps)):
            problems.append(f"run {run_id}: not exactly one assistant message per step")
        if tools.get(run_id, 0) != steps - 1:
            problems.append(f"run {run_id}: {tools.get(run_id, 0)} tool results for {steps - 1} calls")
    return problems


# --- a configuration's fake model -------------------------------------------------------------------------


def fake_model(fake: Any, *, trust_zone: str) -> Any:
    """An ``gpt-4o`` model (128k window, o200k) served by ``fake`` over the OpenAI-compatible API, with
    five 20-sentence ``tone`` snippets for a configuration to select; no retries."""
    from catalog.models import LlmModel, Provider
    from governance.actors import Actor
    from snippets.services import snippet_create

    provider = Provider.objects.create(
        identifier="fake",
        name="Fake",
        kind="openai_compatible",
        base_url=fake.openai_base_url,
        trust_zone=trust_zone,
        max_retries=0,
    )
    model = LlmModel.objects.create(
        provider=provider,
        model_id="gpt-4o",
        context_window=128_000,
        max_output_tokens=4_096,
        tokenizer="o200k_base",
    )
    for n in range(5):
        snippet_create(
            actor=Actor.system("bench"),
            identifier=f"tone-{n}",
            name=f"Tone {n}",
            text="Warm, direct and brief. " * 20,
            tag_names=["tone"],
            data_class="public_content",
            ceiling="external_global",
        )
    return model
