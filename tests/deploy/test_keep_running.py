"""``deploy/keep-running``: the Procfile's worker and beat lines start their command again each time
it exits, waiting longer while it keeps failing, and stop once the runner signals their group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.services.worker import ROOT, wait_for

KEEP_RUNNING = ROOT / "deploy" / "keep-running"


def _started(command: str, tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """The loop running ``sh -c command`` in a session of its own, as honcho starts a Procfile line."""
    log = tmp_path / "starts"
    process = subprocess.Popen(
        [str(KEEP_RUNNING), "sh", "-c", command],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return process, log


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_command_that_exits_starts_again_after_waits_that_double(tmp_path):
    process, log = _started("date +%s.%N >> starts; exit 3", tmp_path)
    try:
        wait_for(lambda: len(_lines(log)) == 3, timeout=15, what="the third start")
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # as honcho stops a process: its whole group
    _, errors = process.communicate(timeout=10)
    assert process.returncode == 3  # stopped while waiting: the status the command last exited with
    first, second, third = (float(stamp) for stamp in _lines(log))
    assert 1.0 <= second - first < 1.9
    assert 2.0 <= third - second < 2.9
    assert errors.splitlines() == [
        "keep-running: sh exited with status 3; restart 1 in 1 s",
        "keep-running: sh exited with status 3; restart 2 in 2 s",
        "keep-running: sh exited with status 3; restart 3 in 4 s",
    ]
    time.sleep(1.5)
    assert len(_lines(log)) == 3  # nothing started after the stop


def test_a_stop_signal_ends_the_loop_once_the_command_has_shut_down(tmp_path):
    # The command takes its time to stop, as a worker finishing its steps does.
    command = (
        'trap "sleep 0.5; echo stopped >> starts; exit 0" TERM; echo started >> starts; '
        "while :; do sleep 0.1; done"
    )
    process, log = _started(command, tmp_path)
    wait_for(lambda: _lines(log) == ["started"], timeout=10, what="the command to start")
    os.killpg(process.pid, signal.SIGTERM)
    _, errors = process.communicate(timeout=10)
    assert process.returncode == 0  # the command's own status
    assert "keep-running" not in errors  # no restart announced
    time.sleep(1.5)
    assert _lines(log) == ["started", "stopped"]  # waited for, and not started again
