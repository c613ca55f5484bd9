"""The copies of the anchors kept outside the database: an append-only file and the log stream.

Whoever can delete rows can delete a chain's tail, its head, the anchors that saw it and the anchors'
head together, and what is left verifies. So every anchor, once committed, is also appended to
``GOVERNANCE_LOG_ANCHOR_FILE`` as one JSON line (:func:`anchor_document`: its position, time, the
heads it saw, the previous anchor's digest, its own and the id of the key that signed it; lines
written before keys had ids have none) and logged as ``governance log anchor: {...}``
with the same document. Verification reads the file (:func:`anchor_file_read`) and holds the
database to every copy whose digest verifies: a copy cannot be forged without the log key.

What the copies cannot prove: events written after the last anchor that reached them, and anything
once the file (and the shipped log) are rewritten too. They are only as safe as where they live.

Reading accepts the file's own lines, JSON log lines (the document is in ``message``) and text log
lines, so a shipped log can stand in for the file. Other lines of a log are skipped; a line that
claims to be an anchor and cannot be read as one is reported, never skipped.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance.models import GovernanceAnchor

logger = logging.getLogger(__name__)

# The start of an anchor's log message; what follows it is the anchor's document.
ANCHOR_LOG_PREFIX = "governance log anchor: "
_KEYS = frozenset(("seq", "created_at", "heads", "prev_hash", "hash"))
_KEYS_WITH_ID = _KEYS | {"key_id"}


@dataclass(frozen=True)
class AnchorCopy:
    """An anchor as a copy outside the database holds it."""

    seq: int
    created_at: datetime.datetime
    heads: list[list[int | str]]
    prev_hash: str
    hash: str
    key_id: str = ""  # empty on a line written before keys had ids


@dataclass(frozen=True)
class AnchorFile:
    """What a file of anchors holds: the anchors read (in file order), the numbers of lines that
    claimed to be anchors and could not be read, and whether the file exists at all."""

    path: Path
    present: bool
    anchors: tuple[AnchorCopy, ...] = ()
    unreadable: tuple[int, ...] = ()


def anchor_document(anchor: GovernanceAnchor) -> str:
    """The anchor as one line of sorted-key JSON (its time in UTC to the microsecond)."""
    document = {
        "seq": anchor.seq,
        "created_at": anchor.created_at.astimezone(datetime.UTC).isoformat(timespec="microseconds"),
        "heads": anchor.heads,
        "prev_hash": anchor.prev_hash,
        "hash": anchor.hash,
        "key_id": anchor.key_id,
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def anchor_publish(anchor: GovernanceAnchor, path: Path) -> None:
    """Log the committed ``anchor`` and append it to the file at ``path`` (created with its folder
    when missing; flushed to disk). A file that cannot be written is logged as an error and the
    anchor stays in the database and the log: anchoring never stops the service."""
    document = anchor_document(anchor)
    logger.info("%s%s", ANCHOR_LOG_PREFIX, document)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="ascii") as file:
            file.write(document + "\n")
            file.flush()
            os.fsync(file.fileno())
    except OSError:
        logger.exception("governance log anchor %s could not be appended to %s", anchor.seq, path)


def anchor_file_read(path: Path) -> AnchorFile:
    """Every anchor the file at ``path`` holds (see the module docstring for the lines it reads).
    Reads the whole file once; a missing file is ``present=False``, an unreadable one raises
    ``OSError``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return AnchorFile(path=path, present=False)
    anchors: list[AnchorCopy] = []
    unreadable: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            copy = _copy(line)
        except (ValueError, TypeError, KeyError):
            unreadable.append(number)
            continue
        if copy is not None:
            anchors.append(copy)
    return AnchorFile(path=path, present=True, anchors=tuple(anchors), unreadable=tuple(unreadable))


def _copy(line: str) -> AnchorCopy | None:
    """The anchor on ``line``; None when the line does not claim to hold one; raises when it does and
    is malformed."""
    line = line.strip()
    if not line:
        return None
    try:
        value: Any = json.loads(line)
    except ValueError:
        value = line  # a text log line
    if isinstance(value, dict) and not _KEYS & value.keys():
        value = value.get("message")  # a JSON log line
        if not isinstance(value, str):
            return None
    if isinstance(value, str):
        at = value.find(ANCHOR_LOG_PREFIX)
        if at < 0:
            return None
        value = json.loads(value[at + len(ANCHOR_LOG_PREFIX) :])
    if not isinstance(value, dict) or set(value) not in (_KEYS, _KEYS_WITH_ID):
        raise ValueError("not an anchor")
    created_at = datetime.datetime.fromisoformat(value["created_at"])
    heads = value["heads"]
    well_formed = (
        type(value["seq"]) is int
        and created_at.tzinfo is not None
        and isinstance(heads, list)
        and all(_head(item) for item in heads)
        and all(isinstance(value.get(name, ""), str) for name in ("prev_hash", "hash", "key_id"))
    )
    if not well_formed:
        raise ValueError("not an anchor")
    return AnchorCopy(
        seq=value["seq"],
        created_at=created_at,
        heads=heads,
        prev_hash=value["prev_hash"],
        hash=value["hash"],
        key_id=value.get("key_id", ""),
    )


def _head(item: object) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 3
        and type(item[0]) is int
        and type(item[1]) is int
        and isinstance(item[2], str)
    )
