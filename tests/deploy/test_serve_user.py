"""``make serve SERVE_USER=name``: every command of the release step and of serving runs as that user
(the services suite starts it for real where the user can run the interpreter:
tests/services/test_serve_processes.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.services.worker import ROOT

VENV = Path(sys.executable).parent.parent


def _planned(*arguments: str) -> list[str]:
    """The commands ``make serve`` would run (``make -n``), requirements taken as installed."""
    command = [
        "make",
        "--no-print-directory",
        "-n",
        "serve",
        f"VENV={VENV}",
        "-o",
        str(VENV / ".installed-run"),
        *arguments,
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, timeout=30)
    return [line for line in result.stdout.splitlines() if not line.startswith("echo ")]


def test_serve_user_runs_the_release_step_and_every_process_as_that_user():
    planned = _planned("SERVE_USER=govctx")
    assert len(planned) == 4  # the metrics directory emptied, made, the release step, honcho
    assert all(line.startswith("runuser -u govctx -- ") for line in planned), planned
    assert planned[-1].endswith(
        "-m config.envexec honcho start --no-colour -e /dev/null -f Procfile web worker beat"
    )


def test_without_serve_user_make_serve_runs_as_whoever_runs_it():
    planned = _planned()
    assert len(planned) == 4
    assert not any("runuser" in line for line in planned), planned
