"""The embedded default's backup, taken while runs are in flight and a writer writes, restored after
its database is lost (tests/agents/backup_scenario.py holds the scenario; the PostgreSQL round trip
is tests/services/test_backup_restore_pg.py).

Each step runs as an operator runs it: ``manage.py`` in a process of its own, on an embedded default
whose database is a file under a temporary ``APP_VAR_DIR``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def manage(*arguments: str, var: Path) -> subprocess.CompletedProcess[str]:
    """``manage.py`` in a process of its own, on the embedded default under ``var``, eager steps."""
    prefixes = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "PROMETHEUS_", "APP_", "GOVERNANCE_", "ENV_FILE")
    environment = {name: value for name, value in os.environ.items() if not name.startswith(prefixes)}
    environment.update({"APP_VAR_DIR": str(var), "AGENT_RUNS_IN_BACKGROUND": "false", "LOG_LEVEL": "ERROR"})
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )


def scenario(step: str, work: Path, var: Path) -> None:
    code = f"from tests.agents.backup_scenario import main; main({step!r}, {str(work)!r})"
    result = manage("shell", "--no-imports", "-c", code, var=var)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def restored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The scenario before the backup (one process), the database lost, then the restore, the
    verifications and the sweep (another process)."""
    work = tmp_path_factory.mktemp("backup")
    var = work / "var"
    scenario("before", work, var)
    for name in ("db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm"):  # the disaster
        (var / name).unlink(missing_ok=True)
    scenario("after", work, var)
    after = json.loads((work / "after.json").read_text())
    return {
        "record": json.loads((work / "record.json").read_text()),
        "after": after,
        "manifest": json.loads((work / "backup" / "manifest.json").read_text()),
        **after["commands"],
        "asides": [Path(path) for path in after["asides"]],
    }


def test_the_backup_is_the_online_copy_and_the_anchor_file_taken_first(restored):
    manifest = restored["manifest"]
    assert (manifest["vendor"], manifest["database"], manifest["anchor_file"]) == (
        "sqlite",
        "db.sqlite3",
        "governance-anchors.jsonl",
    )
    assert manifest["anchor_lines"] == 2  # the two anchors before it; the one after is not in it
    assert "agents.0001_initial" in manifest["migrations"]
    assert len(manifest["key_ids"]) == 1


def test_the_restore_says_what_it_did(restored):
    restore = restored["restore"]
    assert restore["status"] == 0, restore["stderr"]
    runs_in_flight = 2 + len(restored["after"]["during_restored"])
    assert f"; {runs_in_flight} run(s) in flight then resume" in restore["stdout"]
    assert "The anchor file before the restore is kept as" in restore["stdout"]
    assert restore["stderr"] == ""


def test_the_restored_log_verifies_against_the_backups_anchors(restored):
    verified = restored["verify"]
    assert verified["status"] == 0, verified["stderr"]
    assert verified["stdout"].startswith("Governance log intact: ")
    assert "2 anchors in " in verified["stdout"]


def test_the_anchor_file_set_aside_names_the_window_the_restore_wound_back(restored):
    (aside,) = restored["asides"]
    assert len(aside.read_text().splitlines()) == 3  # kept whole, the anchor after the backup too
    against = restored["verify_aside"]
    assert against["status"] == 1
    assert "anchors 3 to 3 are in the anchor file and gone from the database" in against["stderr"]


def test_nothing_acknowledged_before_the_backup_is_lost_and_nothing_after_it_appears(restored):
    record, after = restored["record"], restored["after"]
    statuses = after["statuses"]
    assert set(record["acknowledged"]["runs"]) <= statuses.keys()
    assert set(record["acknowledged"]["events"]) <= set(after["events"])
    assert record["after"] not in statuses


def test_runs_written_during_the_copy_are_whole_or_absent(restored):
    after = restored["after"]
    assert after["during_with_event"] == sorted(after["during_restored"])
    assert after["intact"], after["breaks"]


def test_runs_in_flight_resume_at_the_reapers_sweep_and_complete(restored):
    record, after = restored["record"], restored["after"]
    in_flight = sorted([record["queued"], record["leased"], *after["during_restored"]])
    assert after["lease_owners_before_sweep"] == ["", "restored"]
    assert after["requeued"] == in_flight
    assert after["completed_runs"] == sorted([*record["seeded_completed"], *record["completed"], *in_flight])
    assert after["intact"], after["breaks"]
