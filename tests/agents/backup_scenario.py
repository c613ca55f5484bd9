"""A service with runs in flight, backed up while it writes, and what its restore must hold.

Run inside a configured Django process (``manage.py shell -c``, or a test's own process):
:func:`before_backup` builds the state and takes the backup, :func:`after_restore` runs the reaper's
sweep on the restored database and reports. Both exchange plain JSON, so the restore side can run in
another process against another database.

- **acknowledged**: two runs that completed, one queued whose first message was lost, one mid-step
  whose worker holds a live lease (it dies with the old database), and their governance events
  (every input carries a canary secret, so each run records a ``secret_redacted`` event);
- **written during the backup**: a thread creates runs while the copy is taken: each is in the copy
  whole, or not at all (the restored log verifies, and each present run is queued with its event);
- **after the backup**: one more run and one more anchor, which the restore must not hold.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from unittest import mock

from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from agents.backups import backup_take
from agents.models import AgentRun, RunStatus
from agents.reaper import reap_sweep
from agents.runtime.leases import lease_claim
from agents.services import run_create
from catalog.models import Configuration
from governance.chain.verify import governance_log_verify
from governance.chain.writes import anchor_record
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.canaries import generate_canaries

CANARY = generate_canaries(seed=20261206)[0]
DEAD_WORKER = "worker-lost-with-the-old-database"


def _run(text: str, *, enqueued: bool = True) -> str:
    configuration = Configuration.objects.get(identifier="demo-assistant")
    arguments = {
        "configuration": configuration,
        "input_text": f"{text}: {CANARY.context}",
        "input_data_class": DataClass.PUBLIC_CONTENT,
        "receiver_zone": TrustZone.LOCAL,
    }
    if enqueued:
        return str(run_create(**arguments).id)
    with mock.patch("agents.services.runs.step_enqueue"):  # the message is lost
        return str(run_create(**arguments).id)


def before_backup(directory: Path) -> dict[str, object]:
    completed = [_run("a finished run"), _run("another finished run")]
    anchor_record()
    queued = _run("a run whose first message was lost", enqueued=False)
    leased = _run("a run mid-step", enqueued=False)
    assert lease_claim(run_id=leased, step_index=0, worker=DEAD_WORKER).claimed
    anchor_record()
    acknowledged = {
        "runs": sorted([*completed, queued, leased]),
        "events": sorted(GovernanceEvent.objects.values_list("id", flat=True)),
    }
    during: list[str] = []
    stop = threading.Event()

    def write_while_copying() -> None:
        try:
            while not stop.is_set():
                during.append(_run("a run created during the backup", enqueued=False))
        finally:
            connection.close()

    writer = threading.Thread(target=write_while_copying)
    writer.start()
    try:
        backup_take(directory=directory)
    finally:
        stop.set()
        writer.join()
    after = _run("a run created after the backup")
    anchor_record()
    return {
        "completed": completed,
        "queued": queued,
        "leased": leased,
        "acknowledged": acknowledged,
        "during": during,
        "after": after,
    }


def after_restore(record: dict[str, object]) -> dict[str, object]:
    """Sweep as the reaper does when a server or beat starts, then report what the restore holds."""
    before_sweep = dict(AgentRun.objects.values_list("id", "lease_owner"))
    swept = reap_sweep()
    runs = {str(run_id): status for run_id, status in AgentRun.objects.values_list("id", "status")}
    during = [run_id for run_id in record["during"] if run_id in runs]  # type: ignore[union-attr]
    anchor_record()
    verification = governance_log_verify()
    return {
        "lease_owners_before_sweep": sorted({str(owner) for owner in before_sweep.values()}),
        "requeued": sorted(item.run_id for item in swept.requeued),
        "statuses": runs,
        "events": sorted(GovernanceEvent.objects.values_list("id", flat=True)),
        "during_restored": during,
        "during_with_event": sorted(
            str(correlation)
            for correlation in GovernanceEvent.objects.filter(correlation_id__in=during).values_list(
                "correlation_id", flat=True
            )
        ),
        "completed_runs": sorted(run_id for run_id, status in runs.items() if status == RunStatus.COMPLETED),
        "intact": verification.intact,
        "breaks": [str(item) for item in verification.breaks],
    }


def _command(*arguments: str) -> dict[str, object]:
    """``manage.py <arguments>`` in this process: its exit status and what it printed."""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        call_command(*arguments, stdout=stdout, stderr=stderr)
        status = 0
    except SystemExit as exit:
        status = int(exit.code or 0)
    except CommandError as error:
        status, stderr = 1, io.StringIO(str(error))
    return {"status": status, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


def main(step: str, work: str) -> None:
    """``manage.py shell -c`` entry, in the folder ``work``. ``before``: migrate and seed a new
    embedded database, then :func:`before_backup` (``record.json``). ``after``, once the database is
    lost: ``restore_database``, ``verify_governance_log`` against the live anchor file and against
    the one set aside, then :func:`after_restore` (``after.json``)."""
    folder = Path(work)
    if step == "before":
        call_command("migrate", verbosity=0)
        call_command("seed_demo", stdout=io.StringIO())
        # The demo's own runs (seeded through the runtime), complete before the backup is taken.
        seeded = [
            str(run_id)
            for run_id in AgentRun.objects.filter(status=RunStatus.COMPLETED).values_list("id", flat=True)
        ]
        record = {**before_backup(folder / "backup"), "seeded_completed": seeded}
        (folder / "record.json").write_text(json.dumps(record))
        return
    record = json.loads((folder / "record.json").read_text())
    commands = {"restore": _command("restore_database", str(folder / "backup"))}
    commands["verify"] = _command("verify_governance_log")
    live = Path(settings.GOVERNANCE_LOG_ANCHOR_FILE)
    asides = sorted(str(path) for path in live.parent.glob(live.name + ".before-restore-*"))
    if asides:
        commands["verify_aside"] = _command("verify_governance_log", "--anchor-file", asides[0])
    report = {**after_restore(record), "commands": commands, "asides": asides}
    (folder / "after.json").write_text(json.dumps(report))
