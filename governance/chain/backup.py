"""The anchor file in a backup, and after a restore.

The anchors outside the database (``GOVERNANCE_LOG_ANCHOR_FILE``, decision 0028) are what a
verifier holds the database to. A restore winds the database back to the moment of its copy, so the
live file names anchors the restored database never saw: verified against it, the restored log
reports, correctly, that the anchors (and the events) written after the backup are gone. That is
the truth about the window the restore lost, not about the restored log. So:

- **the backup keeps its own copy of the file**, taken *before* the database's snapshot (as the
  verifier reads the file before its snapshot): every anchor in the copy was committed before the
  snapshot began, so the restored database holds every anchor its copy names. An anchor committed
  after the file was copied and before the snapshot is only in the database, which is not a break;
- **a restore sets the live file aside, never deletes or rewrites it** (renamed
  ``<name>.before-restore-<UTC time>``), and puts the backup's copy in its place, so the restored
  log verifies and new anchors append to the copy. The file set aside is the record of what the
  restore lost: ``verify_governance_log --anchor-file <it>`` names the anchors and positions gone.

Only complete lines are copied: the file is appended to while the copy is taken, and a torn last
line would read as an anchor that cannot be read (a break).
"""

from __future__ import annotations

import datetime
import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)

ASIDE_SUFFIX = ".before-restore-"


def anchor_file_copy(source: Path, target: Path) -> int | None:
    """Copy the complete lines of the anchor file ``source`` to ``target`` (flushed to disk); how
    many lines were copied, or None when there is no such file (nothing is written then)."""
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        return None
    complete = data[: data.rfind(b"\n") + 1]
    _write_synced(target, complete)
    return complete.count(b"\n")


def anchor_file_reinstate(copy: Path | None, live: Path, *, now: datetime.datetime) -> Path | None:
    """Set the live anchor file ``live`` aside when it holds anything, and put the backup's ``copy``
    (None: the backup had none) in its place; the path the live file was moved to, or None."""
    aside = None
    if live.is_file() and live.stat().st_size > 0:
        aside = live.with_name(live.name + ASIDE_SUFFIX + now.strftime("%Y%m%dT%H%M%S.%fZ"))
        live.rename(aside)
        logger.warning("the governance log's anchor file %s was set aside as %s by a restore", live, aside)
    elif live.is_file():
        live.unlink()
    if copy is not None:
        _write_synced(live, copy.read_bytes())
    return aside


def _write_synced(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as file:  # never over an existing file: a restore sets the old one aside
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
