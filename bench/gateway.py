"""The OpenAI-compatible API as a gateway: what a request through it costs over calling the provider.

Run: ``.venv/bin/python bench/gateway.py [--quick]``. Prints a table and ends with exactly one JSON
line (``{"benchmark": "gateway", ...}``). Never passes or fails on time.

The service runs on SQLite, served over HTTP on loopback, with a configuration served by the loopback
fake provider; each server is a process of its own, as in production (in a thread of the process that
runs the client and the fake it would share one interpreter lock with them, and the hand-overs between
them would be what is measured). The official ``openai`` SDK is the client throughout; peers in the
same run, on the same request:

* ``direct``: the SDK straight to the fake provider;
* ``hop``: the SDK through a bare passthrough proxy (``bench/_hop.py``: a few lines of ASGI under
  uvicorn forwarding bytes with httpx), the floor for any Python hop in front of a provider;
* ``gateway``: the SDK to ``/api/openai/v1`` with the client token, served by Django's threaded WSGI
  server (the ``runserver`` stack, writing without Nagle's delay as uvicorn does): authentication, the configuration's
  prompt and snippets, the conversation made caller context, the governance decision and its events,
  redaction of every part both ways, the fit, the guard pass, the reply's shape;
* ``gateway_asgi``: the same through the production stack, uvicorn serving ``config.asgi:application``
  (on the same SQLite database), where a streamed completion waits on the provider on the event loop;
* ``litellm``: LiteLLM's proxy (``var/litellm-venv``, ``make litellm-venv``; left out, and said so,
  without it), as it starts by default (one uvicorn worker, a master key, no database), with one model
  routed to the same fake; the SDK sends the same conversation to it with the master key;
* ``responses``, ``responses_asgi``: the same conversation as ``input`` items to ``/api/openai/v1/responses``
  on each server (``client.responses.create``): the same governed call, translated, its response stored.

Each figure is taken in interleaved rounds (every peer once per round, in turn), so a change in the
machine's speed falls on every peer alike. Figures: **overhead** = median(gateway) - median(direct) for a 50-message conversation (25 user and 25
assistant turns) answered at once; **first chunk** = time to the first streamed chunk with the fake
answering after a fixed delay, through the gateway and direct; **over hop**: the gateway's overhead
divided by the bare hop's, so the figures read as ratios on any machine; **CPU per request**: the
serving process's user and system time (``/proc/<pid>/stat``, in clock ticks) spent during each of a
peer's requests (they run one at a time), summed over the rounds and divided by their number, so the
chat and Responses peers of one server each get their own figure. Targets: overhead ≤ 15 ms median, and
time added to the first chunk ≤ 15 ms median (``first_chunk_added_ms``: WSGI, the figure tracked so
far; ``asgi_first_chunk_added_ms``: uvicorn).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import fake_model  # noqa: E402 - the path above makes the project importable

MESSAGES = 50
LITELLM = ROOT / "var" / "litellm-venv" / "bin" / "litellm"
FIRST_CHUNK_DELAY = 0.05  # seconds the fake waits before its first byte


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--serve-wsgi", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument(
        "--base",
        type=Path,
        metavar="CHECKOUT",
        help="also serve another checkout of the project (same schema) as peers base and base_asgi, "
        "in the same rounds, to compare a change with what it changes",
    )
    args = parser.parse_args()
    if args.base is not None:
        os.environ["GATEWAY_BASE"] = str(args.base.resolve())  # read by the child
    runs = 15 if args.quick else 60
    if args.serve_wsgi:
        serve_wsgi(args.serve_wsgi)
        return
    if args.child:
        print(json.dumps(measure(runs)))
        return
    report(spawn(args.quick), runs)


def spawn(quick: bool) -> dict[str, Any]:
    database = Path(f"/tmp/gateway-{uuid.uuid4().hex}.sqlite3")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"sqlite:///{database}",
    }
    env.pop("REDIS_URL", None)
    command = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
    try:
        out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    finally:
        database.unlink(missing_ok=True)
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- the child ----------------------------------------------------------------------------------------------


def measure(runs: int) -> dict[str, Any]:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from tests.fakes.provider_server import FakeProvider

    conversation = _conversation()
    servers = {"gateway": _serve(), "gateway_asgi": _serve_asgi()}
    base = os.environ.get("GATEWAY_BASE")
    if base:
        servers |= {"base": _serve(Path(base)), "base_asgi": _serve_asgi(Path(base))}
    with FakeProvider(default_reply="Done.") as fake:
        servers["hop"] = _serve_hop(fake.openai_base_url)
        if LITELLM.exists():
            servers["litellm"] = _serve_litellm(fake.openai_base_url)
        with contextlib.ExitStack() as started:
            urls = {name: started.enter_context(server) for name, server in servers.items()}
            return _measure_peers(fake, servers, urls, conversation, runs)


def _measure_peers(
    fake: Any,
    servers: dict[str, _server_process],
    urls: dict[str, str],
    conversation: list[dict[str, str]],
    runs: int,
) -> dict[str, Any]:
    import openai

    from tests.fakes.provider_server import Reply

    model, token = _configuration(fake)
    direct = openai.OpenAI(base_url=fake.openai_base_url, api_key="x", max_retries=0, timeout=30)
    hop = openai.OpenAI(base_url=f"{urls['hop']}/v1", api_key="x", max_retries=0, timeout=30)
    peers = {"direct": (direct, "gpt-4o", "chat"), "hop": (hop, "gpt-4o", "chat")}
    if "litellm" in urls:
        litellm = openai.OpenAI(
            base_url=f"{urls['litellm']}/v1", api_key=servers["litellm"].key, max_retries=0, timeout=30
        )
        peers["litellm"] = (litellm, "gpt-4o", "chat")
    for name, url in urls.items():
        if name not in ("hop", "litellm"):
            client = openai.OpenAI(base_url=f"{url}/api/openai/v1", api_key=token, max_retries=0, timeout=30)
            peers[name] = (client, model, "chat")
    peers |= {"responses": (peers["gateway"][0], model, "responses")}
    peers |= {"responses_asgi": (peers["gateway_asgi"][0], model, "responses")}
    served_by = {name: name for name in servers}
    served_by |= {"responses": "gateway", "responses_asgi": "gateway_asgi"}
    whole, cpu = _rounds(peers, servers, lambda peer: _whole(*peer, conversation), runs, served_by)
    fake.default_reply = Reply(text="A streamed answer in several pieces.", latency=FIRST_CHUNK_DELAY)
    first, _ = _rounds(peers, {}, lambda peer: _first_chunk(*peer, conversation), runs)
    return {
        "n": runs,
        "messages": MESSAGES,
        "whole_ms": {name: _summary(times) for name, times in whole.items()},
        "first_chunk_ms": {name: _summary(times) for name, times in first.items()},
        "cpu_ms_per_request": cpu,
        "fake_delay_ms": FIRST_CHUNK_DELAY * 1000,
    }


def _conversation() -> list[dict[str, str]]:
    turns = []
    for n in range(MESSAGES // 2):
        turns.append(
            {"role": "user", "content": f"Question {n}: how does the importer handle file {n}? " * 3}
        )
        turns.append(
            {"role": "assistant", "content": f"Answer {n}: it reads the file, checks it and stores it. " * 3}
        )
    turns[-1] = {"role": "user", "content": "Summarise the thread."}
    return turns


def serve_wsgi(port: int) -> None:
    """The project's WSGI application on ``port`` under Django's threaded WSGI server (``runserver``'s),
    until the process is terminated."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.utils.module_loading import import_string

    class QuietHandler(WSGIRequestHandler):
        # Each response written at once, as uvicorn's sockets do (TCP_NODELAY): otherwise a small
        # write after the headers waits for the client's delayed ACK, about 40 ms on loopback.
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", port), QuietHandler, allow_reuse_address=True)
    # The application runserver loads (config/wsgi.py), with what a serving process starts.
    server.set_app(import_string(settings.WSGI_APPLICATION))
    server.serve_forever()


class _server_process:
    """A server of the project on a loopback port, in a process of its own as in production, on the
    child's database and settings."""

    start_seconds = 60
    env_unset: tuple[str, ...] = ()

    def command(self, port: int) -> list[str]:
        raise NotImplementedError

    def __enter__(self) -> str:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        env = {**os.environ, "API_RATE_LIMIT": "1000000/min"}  # the benchmark must not be throttled
        for name in self.env_unset:
            env.pop(name, None)
        self.server = subprocess.Popen(self.command(port), env=env, cwd=getattr(self, "checkout", ROOT))
        deadline = time.monotonic() + self.start_seconds
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if self.server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{' '.join(self.command(port))} did not start") from None
                time.sleep(0.1)
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc_info: object) -> None:
        self.server.terminate()
        self.server.wait(timeout=10)

    def cpu_seconds(self) -> float:
        """The server process's user and system CPU time so far (Linux ``/proc``)."""
        fields = Path(f"/proc/{self.server.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _serve(_server_process):
    """The project's WSGI application under Django's threaded WSGI server (:func:`serve_wsgi`); of
    ``checkout`` when given (the ``--base`` peers), else of this one."""

    def __init__(self, checkout: Path = ROOT) -> None:
        self.checkout = checkout

    def command(self, port: int) -> list[str]:
        return [sys.executable, str(self.checkout / "bench" / "gateway.py"), "--serve-wsgi", str(port)]


class _serve_asgi(_serve):
    """The project's ASGI application (``config.asgi:application``) under uvicorn."""

    def command(self, port: int) -> list[str]:
        application = ["uvicorn", "config.asgi:application", "--port", str(port)]
        return [sys.executable, "-m", *application, "--log-level", "warning", "--lifespan", "off"]


class _serve_hop(_server_process):
    """The bare passthrough hop (``bench/_hop.py``) under uvicorn, forwarding to ``upstream``."""

    def __init__(self, upstream: str) -> None:
        os.environ["HOP_UPSTREAM"] = upstream  # read by the server process at its start

    def command(self, port: int) -> list[str]:
        application = ["uvicorn", "bench._hop:application", "--port", str(port)]
        return [sys.executable, "-m", *application, "--log-level", "warning", "--lifespan", "off"]


class _serve_litellm(_server_process):
    """LiteLLM's proxy with one model, ``gpt-4o``, routed to ``upstream`` (the fake), as it starts by
    default: one uvicorn worker, no database, its cost map read from its package."""

    start_seconds = 180  # it imports for about half a minute
    env_unset = ("DATABASE_URL", "REDIS_URL")  # the service's, which it would try to use

    def __init__(self, upstream: str) -> None:
        import secrets
        import tempfile

        self.key = "sk-" + secrets.token_hex(16)
        self.config = Path(tempfile.mkdtemp()) / "litellm.yaml"
        model = {"model": "openai/gpt-4o", "api_base": upstream, "api_key": "x"}
        self.config.write_text(
            json.dumps({"model_list": [{"model_name": "gpt-4o", "litellm_params": model}]})
        )
        # read by the server process at its start
        os.environ.update(LITELLM_MASTER_KEY=self.key, LITELLM_LOCAL_MODEL_COST_MAP="True")

    def command(self, port: int) -> list[str]:
        return [str(LITELLM), "--config", str(self.config), "--host", "127.0.0.1", "--port", str(port)]

    def __exit__(self, *exc_info: object) -> None:
        super().__exit__(*exc_info)
        self.config.unlink(missing_ok=True)
        self.config.parent.rmdir()


def _configuration(fake: Any) -> tuple[str, str]:
    from catalog.models import Configuration
    from catalog.services import api_client_create

    model = fake_model(fake, trust_zone="external_eu")
    configuration = Configuration.objects.create(
        identifier="gateway",
        name="Gateway",
        model=model,
        system_prompt="You answer questions about the importer.",
        system_prompt_data_class="public_content",
        system_prompt_ceiling="external_global",
        snippet_tags=["tone"],
    )
    issued = api_client_create(
        name="bench", scopes=["configurations:use"], configurations=[configuration], trust_zone="external_eu"
    )
    return configuration.identifier, issued.token


def _rounds(
    peers: dict[str, tuple[Any, str, str]],
    servers: dict[str, _server_process],
    call: Callable[[tuple[Any, str, str]], float],
    runs: int,
    served_by: dict[str, str] | None = None,
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """``runs`` rounds (after three not counted), each calling every peer once in turn, so a change
    in the machine's speed falls on every peer alike: each peer's figures, and, for each peer that
    ``served_by`` names a server of, that server's CPU time per counted request of that peer (the
    requests run one at a time, so the CPU a server spends during one is that request's)."""
    for _ in range(3):
        for peer in peers.values():
            call(peer)
    served_by = served_by or {}
    figures: dict[str, list[float]] = {name: [] for name in peers}
    spent: dict[str, float] = dict.fromkeys(served_by, 0.0)
    for _ in range(runs):
        for name, peer in peers.items():
            server = servers.get(served_by.get(name, ""))
            before = server.cpu_seconds() if server is not None else 0.0
            figures[name].append(call(peer))
            if server is not None:
                spent[name] += server.cpu_seconds() - before
    return figures, {name: round(seconds * 1000 / runs, 2) for name, seconds in spent.items()}


def _create(client: Any, model: str, api: str, messages: list[dict[str, str]], **fields: Any) -> Any:
    """One request of the peer's API: a chat completion, or a response with the messages as input."""
    if api == "responses":
        return client.responses.create(model=model, input=messages, **fields)
    return client.chat.completions.create(model=model, messages=messages, **fields)


def _whole(client: Any, model: str, api: str, messages: list[dict[str, str]]) -> float:
    """Milliseconds to a whole answer."""
    started = time.perf_counter()
    _create(client, model, api, messages)
    return (time.perf_counter() - started) * 1000


def _first_chunk(client: Any, model: str, api: str, messages: list[dict[str, str]]) -> float:
    """Milliseconds to the first streamed chunk (or Responses text delta) with content."""
    started = time.perf_counter()
    with _create(client, model, api, messages, stream=True) as stream:
        for chunk in stream:
            if getattr(chunk, "delta", None) if api == "responses" else _content(chunk):
                return (time.perf_counter() - started) * 1000
    raise SystemExit("a stream ended without content")


def _content(chunk: Any) -> Any:  # a chat chunk's text
    return chunk.choices and chunk.choices[0].delta.content


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median": round(statistics.median(ordered), 2),
        "p90": round(ordered[int(len(ordered) * 0.9) - 1], 2),
        "min": round(ordered[0], 2),
    }


# --- the report ----------------------------------------------------------------------------------------------


def report(result: dict[str, Any], runs: int) -> None:
    whole, first, cpu = result["whole_ms"], result["first_chunk_ms"], result["cpu_ms_per_request"]

    def added(figures: dict[str, Any], name: str) -> float:
        return round(figures[name]["median"] - figures["direct"]["median"], 2)

    def over_hop(figures: dict[str, Any], name: str) -> float | None:
        hop = added(figures, "hop")
        return round(added(figures, name) / hop, 1) if hop > 0 else None

    print(f"OpenAI SDK, {result['messages']}-message conversation, {runs} requests per peer (medians, ms)")
    print(f"{'peer':<14}{'whole':>10}{'p90':>10}{'first chunk':>14}{'p90':>10}{'CPU/request':>13}")
    for name in whole:
        cpu_text = f"{cpu[name]:>13.2f}" if name in cpu else f"{'-':>13}"
        print(
            f"{name:<14}{whole[name]['median']:>10.2f}{whole[name]['p90']:>10.2f}"
            f"{first[name]['median']:>14.2f}{first[name]['p90']:>10.2f}{cpu_text}"
        )
    ratio = (
        round(whole["gateway"]["median"] / whole["direct"]["median"], 2)
        if whole["direct"]["median"]
        else None
    )
    print(
        f"overhead per request: {added(whole, 'gateway')} ms median ({ratio}x direct, "
        f"{over_hop(whole, 'gateway')}x the bare hop's {added(whole, 'hop')} ms); "
        f"added to first chunk: {added(first, 'gateway')} ms"
    )
    print(
        f"under uvicorn: overhead {added(whole, 'gateway_asgi')} ms ({over_hop(whole, 'gateway_asgi')}x the hop's);"
        f" added to first chunk: {added(first, 'gateway_asgi')} ms ({over_hop(first, 'gateway_asgi')}x the hop's"
        f" {added(first, 'hop')} ms)"
    )
    litellm = {}
    if "litellm" in whole:
        litellm = {
            "asgi_over_litellm": round(added(whole, "gateway_asgi") / added(whole, "litellm"), 3),
            "asgi_first_chunk_over_litellm": round(added(first, "gateway_asgi") / added(first, "litellm"), 3),
            "asgi_cpu_over_litellm": round(cpu["gateway_asgi"] / cpu["litellm"], 3),
            "litellm_overhead_ms": added(whole, "litellm"),
            "litellm_first_chunk_added_ms": added(first, "litellm"),
        }
        print(
            f"under uvicorn over LiteLLM's proxy: added {litellm['asgi_over_litellm']}x (its "
            f"{added(whole, 'litellm')} ms), first chunk {litellm['asgi_first_chunk_over_litellm']}x (its "
            f"{added(first, 'litellm')} ms), CPU per request {litellm['asgi_cpu_over_litellm']}x "
            f"(its {cpu['litellm']} ms); goal: each <= 0.5x"
        )
    else:
        print(f"LiteLLM's proxy not measured: {LITELLM.relative_to(ROOT)} is missing (make litellm-venv)")
    base = {}
    if "base" in whole:
        base = {
            "new_over_base": round(added(whole, "gateway") / added(whole, "base"), 3),
            "asgi_new_over_base": round(added(whole, "gateway_asgi") / added(whole, "base_asgi"), 3),
            "asgi_first_chunk_new_over_base": round(
                added(first, "gateway_asgi") / added(first, "base_asgi"), 3
            ),
            "cpu_new_over_base": round(cpu["gateway"] / cpu["base"], 3),
            "asgi_cpu_new_over_base": round(cpu["gateway_asgi"] / cpu["base_asgi"], 3),
        }
        print(f"this checkout over the base (added time, CPU per request): {base}")
    print(
        json.dumps(
            {
                "benchmark": "gateway",
                **litellm,
                **base,
                "n": runs,
                "messages": result["messages"],
                "overhead_ms": added(whole, "gateway"),
                "gateway_over_direct": ratio,
                "first_chunk_added_ms": added(first, "gateway"),
                "asgi_overhead_ms": added(whole, "gateway_asgi"),
                "asgi_first_chunk_added_ms": added(first, "gateway_asgi"),
                "hop_overhead_ms": added(whole, "hop"),
                "hop_first_chunk_added_ms": added(first, "hop"),
                "overhead_over_hop": over_hop(whole, "gateway"),
                "asgi_overhead_over_hop": over_hop(whole, "gateway_asgi"),
                "asgi_first_chunk_over_hop": over_hop(first, "gateway_asgi"),
                "responses_overhead_ms": added(whole, "responses"),
                "responses_first_chunk_added_ms": added(first, "responses"),
                "asgi_responses_overhead_ms": added(whole, "responses_asgi"),
                "asgi_responses_first_chunk_added_ms": added(first, "responses_asgi"),
                "cpu_ms_per_request": cpu,
                "fake_delay_ms": result["fake_delay_ms"],
                **{f"{name}_whole_ms": whole[name] for name in whole},
                **{f"{name}_first_chunk_ms": first[name] for name in first},
            }
        )
    )


if __name__ == "__main__":
    main()
