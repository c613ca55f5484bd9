"""Log lines are redacted whatever logger wrote them, in both formats: a token in a request's path,
query string or ``Host`` header never appears raw in Django's ``django.request`` and
``django.security.DisallowedHost`` lines, nor in the production server's (uvicorn's) access log, which
is written in ``LOG_FORMAT`` through the project's handler, nor on ``make run``'s console, where
Django's own debug handler and runserver's access log would print it beside ours. The project's
handler is the only one that writes, in every mode."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from logging.config import DictConfigurator
from pathlib import Path

import pytest
from django.test import Client

from config.logs import LogContextFilter, logging_config
from tests.canaries import generate_canaries

ROOT = Path(__file__).resolve().parents[2]
CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261203)}
TOKEN = CANARIES["github_classic_pat"]
KEY = CANARIES["stripe_live_secret_key"]


@contextmanager
def captured(log_format: str) -> Iterator[io.StringIO]:
    """The project's console handler as ``LOGGING`` builds it (its formatter and filter), writing to a
    buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    formatters = logging_config(log_format=log_format, level="INFO")["formatters"]
    handler.setFormatter(DictConfigurator({}).configure_formatter(formatters[log_format]))
    handler.addFilter(LogContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield buffer
    finally:
        root.removeHandler(handler)


def leaks(text: str) -> list[str]:
    return [canary.kind for canary in (TOKEN, KEY) if canary.leaks(text)]


@pytest.mark.django_db
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_django_request_and_disallowed_host_lines_are_redacted(log_format):
    client = Client(raise_request_exception=False)
    with captured(log_format) as output:
        not_found = client.get(f"/api/v1/{TOKEN.value}", {"key": KEY.value})
        bad_host = client.get("/healthz", headers={"Host": f"{TOKEN.value}.example.org"})

    assert (not_found.status_code, bad_host.status_code) == (404, 400)
    lines = output.getvalue().splitlines()
    if log_format == "json":
        records = [json.loads(line) for line in lines]
        loggers = [record["logger"] for record in records]
        messages = [record["message"] for record in records]
    else:
        heads = [line for line in lines if re.match(r"\d{4}-\d\d-\d\d ", line)]  # not a traceback's lines
        loggers = [line.split(" ")[3] for line in heads]
        messages = [line.split(" ", 4)[4] for line in heads]
    assert loggers == ["django.request", "django.security.DisallowedHost"]
    assert messages[0] == "Not Found: /api/v1/[REDACTED:github_token]"
    # The redactor may take the whole host with the token; it always takes the token.
    assert re.fullmatch(
        r"Invalid HTTP_HOST header: '\[REDACTED:\w+\](\.example\.org)?'\. The domain name provided is not "
        r"valid according to RFC 1034/1035\.",
        messages[1],
    )
    assert leaks(output.getvalue()) == []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch(url: str, host: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@contextmanager
def uvicorn(tmp_path: Path, log_format: str) -> Iterator[tuple[str, Path]]:
    port, log = free_port(), tmp_path / f"uvicorn-{log_format}.log"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "APP_VAR_DIR": str(tmp_path)}
    env |= {"LOG_FORMAT": log_format, "LOG_LEVEL": "INFO", "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(port)],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while fetch_quietly(f"http://127.0.0.1:{port}/healthz") is None:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}", log
        finally:
            process.terminate()
            process.wait(timeout=20)


def fetch_quietly(url: str) -> int | None:
    try:
        return fetch(url)
    except OSError:
        return None


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_the_asgi_servers_access_log_follows_log_format_and_is_redacted(tmp_path, log_format):
    with uvicorn(tmp_path, log_format) as (base, log):
        assert fetch(f"{base}/api/v1/{TOKEN.value}?key={KEY.value}") == 404
        assert fetch(f"{base}/healthz", host=f"{TOKEN.value}.example.org") == 400
    output = log.read_text()

    access = '"GET /api/v1/[REDACTED:github_token]?key=[REDACTED:stripe_key] HTTP/1.1" 404'
    if log_format == "json":
        records = [json.loads(line) for line in output.splitlines()]  # every line is one of ours
        lines = [
            r["message"] for r in records if r["logger"] == "uvicorn.access" and "/api/v1/" in r["message"]
        ]
        assert len(lines) == 1
        assert re.fullmatch(r"127\.0\.0\.1:\d+ - " + re.escape(access), lines[0])
        loggers = {r["logger"] for r in records}
        assert {"uvicorn.error", "uvicorn.access", "django.security.DisallowedHost"} <= loggers
    else:
        line = next(line for line in output.splitlines() if " uvicorn.access " in line and "/api/v1/" in line)
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\d [\d:,]+ INFO uvicorn\.access 127\.0\.0\.1:\d+ - " + re.escape(access), line
        )
    assert leaks(output) == []


# Imported before the walk: each of them sets up loggers or handlers of its own when imported (Celery's
# and kombu's, runserver's access log, detect-secrets' console handler).
SELF_CONFIGURING = (
    "config.celery",
    "django.core.management.commands.runserver",
    "governance.guardrails.redaction",
)
WALK = f"""
import importlib, json, logging
from config.logs import JsonLogFormatter, TextLogFormatter
for module in {SELF_CONFIGURING!r}:
    importlib.import_module(module)
loggers = {{"root": logging.getLogger()}}
loggers |= {{n: l for n, l in logging.Logger.manager.loggerDict.items() if isinstance(l, logging.Logger)}}
raw = [
    f"{{name}}: {{handler!r}}"
    for name, logger in loggers.items()
    for handler in logger.handlers
    if not isinstance(handler, logging.NullHandler)
    and not isinstance(handler.formatter, (TextLogFormatter, JsonLogFormatter))
]
root = [type(handler.formatter).__name__ for handler in logging.getLogger().handlers]
print(json.dumps({{"raw": raw, "root": root}}))
"""


def run_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """The environment ``make run`` gives its commands (base settings, ``DJANGO_DEBUG=1``, the embedded
    default database), under ``tmp_path``."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "APP_VAR_DIR": str(tmp_path),
    }
    for name in ("DATABASE_URL", "REDIS_URL", "LOG_FORMAT", "LOG_LEVEL", "DJANGO_SECRET_KEY"):
        environment.pop(name, None)
    return {**environment, "DJANGO_DEBUG": "1", **env}


@pytest.mark.parametrize(("debug", "log_format"), [("1", "text"), ("1", "json"), ("0", "text")])
def test_every_handler_of_every_logger_redacts_in_every_mode(tmp_path, debug, log_format):
    env = run_env(tmp_path, DJANGO_DEBUG=debug, LOG_FORMAT=log_format, DJANGO_SECRET_KEY="k" * 50)
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", WALK],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    walked = json.loads(result.stdout.splitlines()[-1])
    expected_root = "JsonLogFormatter" if log_format == "json" else "TextLogFormatter"
    assert walked == {"raw": [], "root": [expected_root]}


@contextmanager
def runserver(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``manage.py runserver`` as ``make run`` starts it (without the autoreloader's second process,
    which configures logging the same way), its stdout and stderr in one file."""
    port, log = free_port(), tmp_path / "runserver.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=ROOT, env=run_env(tmp_path), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while fetch_quietly(f"http://127.0.0.1:{port}/healthz") is None:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}", log
        finally:
            process.terminate()
            process.wait(timeout=20)


def test_make_runs_console_prints_no_raw_secret_from_a_path_a_query_string_or_a_host(tmp_path):
    with runserver(tmp_path) as (base, log):
        assert fetch(f"{base}/api/v1/{TOKEN.value}?key={KEY.value}") == 404
        assert fetch(f"{base}/healthz", host=f"{TOKEN.value}.example.org") == 400
    output = log.read_text()

    assert leaks(output) == []
    access = [line for line in output.splitlines() if " django.server " in line and "/api/v1/" in line]
    assert len(access) == 1
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d [\d:,]+ WARNING django\.server "
        + re.escape('"GET /api/v1/[REDACTED:github_token]?key=[REDACTED:stripe_key] HTTP/1.1" 404 ')
        + r"\d+",
        access[0],
    )
    not_found = [line for line in output.splitlines() if "Not Found: /api/v1/" in line]
    assert not_found == [line for line in not_found if " WARNING django.request " in line]
    assert len(not_found) == 1
