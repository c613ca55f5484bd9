"""Web throughput with one and with two web processes: concurrent clients through the Procfile's web line.

Run: ``.venv/bin/python bench/web_processes.py [--quick]``. Prints a table and ends with exactly one
JSON line (``{"benchmark": "web_processes", ...}``). Never passes or fails on time.

Services: as ``bench/throughput.py`` (``DATABASE_URL``, ``REDIS_URL``; a dedicated database
``<name>_bench_<pid>`` created and dropped; skipped cleanly unless ``REQUIRE_SERVICES=1``).

Peers, in the same run, on the same fake provider (answering at once) and the same configuration:
``python -m config.web`` (the Procfile's web line: uvicorn serving ``config.asgi``) with
``WEB_CONCURRENCY`` 1 and 2, both started before the first round. ``--clients`` threads (16) each post
a short chat completion to ``/api/openai/v1/chat/completions`` with the client token, one after the
other, for ``--seconds`` (3; full 10), a new connection per request (so each request goes to whichever
process accepts it first, as behind a load balancer); a round runs every peer once, in turn (after a
second of warm-up each), so a change in the machine's speed falls on both alike. Figures: completed
requests per second per round, their median, and ``two_over_one``: the median of the per-round
ratios. Every answer must be a 200 with the fake's text; anything else is counted and reported.

The machine (2 cores) also runs the clients, the fake provider, PostgreSQL and Redis: a second web
process can take at most the share of the second core they leave it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import Services, fake_model, run_on_services  # noqa: E402

ANSWER = "Done."
PROCESSES = (1, 2)


class WebLine:
    """``python -m config.web`` on a loopback port with ``WEB_CONCURRENCY`` processes."""

    def __init__(self, services: Services, processes: int, var_dir: Path) -> None:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": services.bench_url,
            "REDIS_URL": services.redis_url,
            "WEB_CONCURRENCY": str(processes),
            "APP_VAR_DIR": str(var_dir),
            "API_RATE_LIMIT": "1000000/min",  # the benchmark must not be throttled
            "LOG_LEVEL": "WARNING",
        }
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.log = (var_dir / "web.log").open("w")
        command = [sys.executable, "-m", "config.web", "--port", str(self.port), "--no-access-log"]
        command += ["--log-level", "warning"]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait(self, token: str, body: bytes) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the web line exited; see {self.log.name}")
            try:
                if _post(self.url, token, body) == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"the web line did not answer within 90 s; see {self.log.name}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.close()


def _post(url: str, token: str, body: bytes) -> int:
    """One request on a new connection (the standard library's client: the load generator shares the
    machine with the servers, so it spends as little CPU as it can); -1 for a 200 with the wrong text."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        connection.request("POST", "/api/openai/v1/chat/completions", body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
    finally:
        connection.close()
    if response.status == 200 and json.loads(payload)["choices"][0]["message"]["content"] != ANSWER:
        return -1
    return response.status


def load(url: str, token: str, body: bytes, clients: int, seconds: float) -> tuple[int, int]:
    """(completed, failed) requests of ``clients`` threads posting one after another for ``seconds``."""
    counts = {"ok": 0, "failed": 0}
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client() -> None:
        ok = failed = 0
        while time.monotonic() < end:
            try:
                status = _post(url, token, body)
            except OSError:
                status = 0
            if status == 200:
                ok += 1
            else:
                failed += 1
        with lock:
            counts["ok"] += ok
            counts["failed"] += failed

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts["ok"], counts["failed"]


def _configuration(fake: Any) -> tuple[str, str]:
    from catalog.models import Configuration
    from catalog.services import api_client_create

    model = fake_model(fake, trust_zone="external_eu")
    configuration = Configuration.objects.create(
        identifier="web-processes",
        name="Web processes",
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


def run(services: Services, args: argparse.Namespace) -> dict[str, Any]:
    from django.core.management import call_command

    from tests.fakes.provider_server import FakeProvider

    load_before = round(os.getloadavg()[0], 2)
    call_command("migrate", verbosity=0, interactive=False)
    rates: dict[int, list[float]] = {n: [] for n in PROCESSES}
    failed: dict[int, int] = dict.fromkeys(PROCESSES, 0)
    with FakeProvider(default_reply=ANSWER) as fake, tempfile.TemporaryDirectory() as scratch:
        model, token = _configuration(fake)
        messages = [{"role": "user", "content": "Summarise the importer."}]
        body = json.dumps({"model": model, "messages": messages}).encode()
        lines: dict[int, WebLine] = {}
        try:
            for processes in PROCESSES:
                var_dir = Path(scratch) / f"web-{processes}"
                var_dir.mkdir()
                lines[processes] = WebLine(services, processes, var_dir)
            for line in lines.values():
                line.wait(token, body)
            for _ in range(args.rounds):
                for processes, line in lines.items():
                    load(line.url, token, body, args.clients, 1.0)  # warm-up, not counted
                    ok, bad = load(line.url, token, body, args.clients, args.seconds)
                    rates[processes].append(ok / args.seconds)
                    failed[processes] += bad
        finally:
            for line in lines.values():
                line.stop()
    ratios = [two / one for one, two in zip(rates[1], rates[2], strict=True) if one]
    return {
        "benchmark": "web_processes",
        "quick": args.quick,
        "cores": os.cpu_count(),
        "clients": args.clients,
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
        "load_average_before": load_before,
        "load_average_after": round(os.getloadavg()[0], 2),
        "requests_per_second": {
            str(n): {
                "median": round(statistics.median(values), 1),
                "min": round(min(values), 1),
                "max": round(max(values), 1),
            }
            for n, values in rates.items()
        },
        "two_over_one": round(statistics.median(ratios), 2) if ratios else None,
        "failed": {str(n): count for n, count in failed.items()},
        "correct": not any(failed.values()),
    }


def report(result: dict[str, Any]) -> int:
    print(
        f"{result['clients']} clients, {result['rounds']} rounds of {result['seconds_per_round']} s, "
        f"{result['cores']} cores, load average before {result['load_average_before']}"
    )
    for n, figures in result["requests_per_second"].items():
        print(
            f"  {n} web process{'es' if n != '1' else ''}: {figures['median']} requests/s "
            f"(rounds {figures['min']}-{figures['max']}), failed {result['failed'][n]}"
        )
    print(f"  two over one: {result['two_over_one']}x")
    print(json.dumps(result, separators=(",", ":")))
    return 0 if result["correct"] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 3 s")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args()
    args.seconds = args.seconds or (3.0 if args.quick else 10.0)
    args.rounds = args.rounds or (3 if args.quick else 5)
    return run_on_services("web_processes", lambda services, logs: report(run(services, args)))


if __name__ == "__main__":
    sys.exit(main())
