"""OTEL_TRACES_EXPORTER: tracing off when unset, console spans when asked, a stop at an unknown exporter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "from opentelemetry import trace; from config.tracing import traced_span\n"
    "with traced_span('probe', attributes={'govctx.run.id': 'r-1'}): pass\n"
    "print('PROVIDER', type(trace.get_tracer_provider()).__name__)"
)


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "APP_VAR_DIR": str(tmp_path),
    }
    environment.pop("OTEL_TRACES_EXPORTER", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_tracing_is_off_by_default_and_console_prints_each_span(tmp_path):
    off = manage(tmp_path, "shell", "--verbosity", "0", "-c", PROBE)
    assert off.returncode == 0, off.stderr
    assert off.stdout.strip() == "PROVIDER ProxyTracerProvider"

    on = manage(
        tmp_path,
        "shell",
        "--verbosity",
        "0",
        "-c",
        PROBE,
        OTEL_TRACES_EXPORTER="console",
        OTEL_SERVICE_NAME="govctx-test",
    )
    assert on.returncode == 0, on.stderr
    provider_line, printed = on.stdout.split("\n", 1)
    assert provider_line == "PROVIDER TracerProvider"
    span = json.loads(printed)
    assert (span["name"], span["kind"], span["attributes"]) == (
        "probe",
        "SpanKind.INTERNAL",
        {"govctx.run.id": "r-1"},
    )
    assert span["resource"]["attributes"]["service.name"] == "govctx-test"


def test_an_unknown_exporter_stops_start_up_naming_the_variable(tmp_path):
    result = manage(tmp_path, "check", OTEL_TRACES_EXPORTER="zipkin")
    assert result.returncode == 1
    assert (
        "OTEL_TRACES_EXPORTER must list exporters among ['otlp', 'console', 'none'], got 'zipkin'"
        in result.stderr
    )
