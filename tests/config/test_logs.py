"""LOG_FORMAT: text by default, one JSON object per line with json, and a stop at a malformed value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import logging; logging.getLogger('probe').warning('probe %s', 1)"


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "APP_VAR_DIR": str(tmp_path),
    }
    environment.pop("LOG_FORMAT", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_log_format_json_writes_one_json_object_per_record_where_the_default_writes_text(tmp_path):
    text = manage(tmp_path, "shell", "-c", PROBE)
    assert text.returncode == 0, text.stderr
    assert text.stderr.splitlines()[-1].endswith(" WARNING probe probe 1")

    result = manage(tmp_path, "shell", "-c", PROBE, LOG_FORMAT="json")
    assert result.returncode == 0, result.stderr
    line = json.loads(result.stderr.splitlines()[-1])
    assert list(line) == ["time", "level", "logger", "message"]
    assert (line["level"], line["logger"], line["message"]) == ("WARNING", "probe", "probe 1")
    assert line["time"].endswith("+00:00")


def test_a_malformed_log_format_stops_start_up_naming_the_variable(tmp_path):
    result = manage(tmp_path, "check", LOG_FORMAT="yaml")
    assert result.returncode == 1
    assert "LOG_FORMAT must be one of ['text', 'json'], got 'yaml'" in result.stderr
