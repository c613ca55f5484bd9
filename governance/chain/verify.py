"""Verifying the governance log: every chain from its first event, every anchor, every head, and
the copies of the anchors kept outside the database.

Reads the anchor file first (``GOVERNANCE_LOG_ANCHOR_FILE``, or a shipped copy or log), then one
consistent snapshot of the database (a ``REPEATABLE READ`` transaction on PostgreSQL; SQLite's read
transaction is one), streaming the events in ``(chain, seq)`` order: memory grows with the number of
chains and anchors, not of events. An anchor is appended to the file only after it is committed, so
reading the file first never finds one the snapshot cannot see.

Every anchor whose digest verifies, from the database or the file, pins the positions and digests it
saw: a chain cut short, a chain gone with its head, or every row gone still shows against the file.
A copy in the file that the database lacks is an anchor deleted; an anchor in the database the file
lacks is not a break (the file may be younger than the log, or an append failed, which is logged).

Reports every break it finds, in the order found (chains in order, then anchors and their copies,
then heads); the first is the first broken link.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from governance.chain.canonical import (
    ANCHOR_FIELDS,
    EVENT_FIELDS,
    GENESIS,
    anchor_digest,
    event_digest,
)
from governance.chain.external import AnchorCopy, AnchorFile, anchor_file_read
from governance.chain.keys import LogKeys, log_keys
from governance.models import GovernanceAnchor, GovernanceAnchorHead, GovernanceEvent, GovernanceLogHead

EDITED = "edited"  # its content no longer matches its digest
CONTENT_EDITED = "its content does not match its digest"
UNLINKED = "unlinked"  # it does not name the digest of the event before it
MISSING = "missing"  # events of the chain are gone (a gap in its positions, or a tail an anchor saw)
HEAD = "head"  # the head row disagrees with the chain's last event
# Its key id names no configured key: the key was removed from GOVERNANCE_LOG_OLD_KEYS, or the id was
# changed. Not an edit as far as anyone can tell without that key, and not proof of integrity either.
UNKNOWN_KEY = "unknown_key"


@dataclass(frozen=True)
class Break:
    """One broken link: the event (or anchor) where it shows, its chain and position, and what is
    wrong (``kind`` one of ``edited``, ``unlinked``, ``missing``, ``head``, ``unknown_key``; ``detail``
    in words)."""

    kind: str
    detail: str
    event_id: int | None = None
    chain: int | None = None
    seq: int | None = None
    anchor: int | None = None

    def __str__(self) -> str:
        where = []
        if self.event_id is not None:
            where.append(f"event {self.event_id}")
        if self.anchor is not None:
            where.append(f"anchor {self.anchor}")
        if self.chain is not None:
            where.append(f"chain {self.chain}" + (f" position {self.seq}" if self.seq is not None else ""))
        return f"{', '.join(where)}: {self.kind}: {self.detail}"


@dataclass
class Verification:
    """What a verification found: ``events``, ``chains`` and ``anchors`` checked, the anchor file
    read and how many anchors it holds (None when there is no such file), and the breaks."""

    events: int = 0
    chains: int = 0
    anchors: int = 0
    anchor_file: str = ""
    file_anchors: int | None = None
    breaks: list[Break] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.breaks


def governance_log_verify(anchor_file: Path | None = None) -> Verification:
    """Verify every chain, every anchor and every head of the log against the anchors of
    ``anchor_file`` (default ``GOVERNANCE_LOG_ANCHOR_FILE``; see the module docstring). Raises
    ``OSError`` when the file exists and cannot be read."""
    copies = anchor_file_read(anchor_file or Path(settings.GOVERNANCE_LOG_ANCHOR_FILE))
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        # Only a transaction's first statement may set its isolation (inside a caller's: its snapshot).
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _verified(log_keys(), copies)


def _verified(keys: LogKeys, copies: AnchorFile) -> Verification:
    result = Verification(
        anchor_file=str(copies.path), file_anchors=len(copies.anchors) if copies.present else None
    )
    anchors = list(GovernanceAnchor.objects.order_by("seq"))
    outside, copy_breaks = _copies_checked(keys, copies)
    # Each position an anchor names, with the digest it saw and the anchors that saw it.
    seen: dict[tuple[int, int], list[tuple[str, int]]] = defaultdict(list)
    bound = {anchor.seq: anchor.heads for anchor in anchors} | {seq: c.heads for seq, c in outside.items()}
    for seq, heads in sorted(bound.items()):
        for chain, position, digest in heads:
            seen[(int(chain), int(position))].append((str(digest), seq))
    lasts = _chains_checked(result, keys, seen)
    _anchors_checked(result, keys, anchors, seen, lasts)
    result.breaks.extend(copy_breaks)
    _copies_compared(result, anchors, outside)
    _heads_checked(result, lasts)
    _anchor_head_checked(result, anchors)
    return result


def _events() -> Iterator[dict[str, Any]]:
    rows = GovernanceEvent.objects.order_by("chain", "seq").values("id", "hash", "key_id", *EVENT_FIELDS)
    yield from rows.iterator(chunk_size=2000)


def _signature_break(
    keys: LogKeys, key_id: str, digest: Callable[[bytes], str], stored: str, edited: str, **at: int | None
) -> Break | None:
    """The break of a link whose ``stored`` digest is not its ``digest`` under the key ``key_id``
    names (``edited``, in words), or whose key is not configured; None when it verifies."""
    matched = keys.matches(key_id, digest, stored)
    if matched is None:
        return Break(UNKNOWN_KEY, f"signed by an unknown key {key_id}", **at)
    return None if matched else Break(EDITED, edited, **at)


def _chains_checked(
    result: Verification, keys: LogKeys, seen: dict[tuple[int, int], list[tuple[str, int]]]
) -> dict[int, tuple[int, str, int | None]]:
    """Walk every chain; the last ``(seq, digest, event id)`` of each."""
    lasts: dict[int, tuple[int, str, int | None]] = {}
    for row in _events():
        chain, seq, event_id = int(row["chain"]), int(row["seq"]), int(row["id"])
        expected_seq, prev, _ = lasts.get(chain, (0, GENESIS, None))
        expected_seq += 1
        at = {"event_id": event_id, "chain": chain, "seq": seq}
        if seq != expected_seq:
            result.breaks.append(Break(MISSING, f"positions {expected_seq} to {seq - 1} are gone", **at))
        elif row["prev_hash"] != prev:
            result.breaks.append(
                Break(UNLINKED, "its previous digest is not the digest of the event before it", **at)
            )
        signature = _signature_break(
            keys, row["key_id"], partial(event_digest, row), row["hash"], CONTENT_EDITED, **at
        )
        if signature is not None:
            result.breaks.append(signature)
        for digest, anchor in seen.get((chain, seq), ()):
            if digest != row["hash"]:
                result.breaks.append(
                    Break(EDITED, f"anchor {anchor} saw another digest at this position", **at)
                )
        lasts[chain] = (seq, str(row["hash"]), event_id)
        result.events += 1
    result.chains = len(lasts)
    return lasts


def _anchors_checked(
    result: Verification,
    keys: LogKeys,
    anchors: list[GovernanceAnchor],
    seen: dict[tuple[int, int], list[tuple[str, int]]],
    lasts: dict[int, tuple[int, str, int | None]],
) -> None:
    """The anchors form one chain, each matches its digest, and every position one saw still exists."""
    prev, expected_seq = GENESIS, 1
    for anchor in anchors:
        at = {"anchor": anchor.seq}
        if anchor.seq != expected_seq:
            result.breaks.append(Break(MISSING, f"anchors {expected_seq} to {anchor.seq - 1} are gone", **at))
        elif anchor.prev_hash != prev:
            result.breaks.append(
                Break(UNLINKED, "its previous digest is not the digest of the anchor before it", **at)
            )
        values = {name: getattr(anchor, name) for name in ANCHOR_FIELDS}
        digest = partial(anchor_digest, values)
        signature = _signature_break(keys, anchor.key_id, digest, anchor.hash, CONTENT_EDITED, **at)
        if signature is not None:
            result.breaks.append(signature)
        prev, expected_seq = anchor.hash, anchor.seq + 1
        result.anchors += 1
    named: set[int] = set()
    for (chain, seq), sightings in sorted(seen.items()):
        last_seq = lasts.get(chain, (0, GENESIS, None))[0]
        if seq > last_seq and chain not in named:  # a chain's cut is named once, where it starts
            named.add(chain)
            seer = sightings[0][1]
            detail = f"anchor {seer} saw position {seq}, the chain now ends at {last_seq}"
            result.breaks.append(Break(MISSING, detail, chain=chain, seq=seq, anchor=seer))


def _copies_checked(keys: LogKeys, copies: AnchorFile) -> tuple[dict[int, AnchorCopy], list[Break]]:
    """The file's copies whose digests verify, by position, and the breaks of the others: a line that
    claims to be an anchor and cannot be read, a copy whose digest fails (forged, or of another key),
    a copy signed by a key no longer configured, two different copies of one position. Only a
    verified copy is held against the database."""
    breaks = [
        Break(EDITED, f"line {number} of the anchor file cannot be read as an anchor")
        for number in copies.unreadable
    ]
    verified: dict[int, AnchorCopy] = {}
    for copy in copies.anchors:
        values = {name: getattr(copy, name) for name in ANCHOR_FIELDS}
        edited = "its copy in the anchor file does not match its digest"
        signature = _signature_break(
            keys, copy.key_id, partial(anchor_digest, values), copy.hash, edited, anchor=copy.seq
        )
        if signature is not None:
            breaks.append(signature)
        elif verified.setdefault(copy.seq, copy).hash != copy.hash:
            breaks.append(Break(EDITED, "the anchor file holds two different copies of it", anchor=copy.seq))
    return verified, breaks


def _copies_compared(
    result: Verification, anchors: list[GovernanceAnchor], outside: dict[int, AnchorCopy]
) -> None:
    """Every verified copy in the file is in the database, as it is there; runs of anchors gone are
    named once."""
    stored = {anchor.seq: anchor.hash for anchor in anchors}
    gone: list[int] = []
    for seq in sorted(outside):
        if seq not in stored:
            gone.append(seq)
        elif stored[seq] != outside[seq].hash:
            result.breaks.append(Break(EDITED, "it differs from its copy in the anchor file", anchor=seq))
    for first, last in _runs(gone):
        detail = f"anchors {first} to {last} are in the anchor file and gone from the database"
        result.breaks.append(Break(MISSING, detail, anchor=first))


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of the sorted ``numbers``, as (first, last)."""
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _heads_checked(result: Verification, lasts: dict[int, tuple[int, str, int | None]]) -> None:
    """Each head row names its chain's last event, and every chain with events has a head (heads are
    never deleted: a missing one is a chain removed or rebuilt)."""
    heads = {head.chain: head for head in GovernanceLogHead.objects.order_by("chain")}
    for chain in sorted(heads.keys() | lasts.keys()):
        last_seq, last_hash, event_id = lasts.get(chain, (0, GENESIS, None))
        head = heads.get(chain)
        at = {"event_id": event_id, "chain": chain, "seq": last_seq}
        if head is None:
            result.breaks.append(Break(HEAD, "the chain has events but no head", **at))
        elif (head.seq, head.hash) != (last_seq, last_hash):
            detail = f"the head names position {head.seq}, the chain ends at position {last_seq}"
            if head.seq == last_seq:
                detail = "the head's digest is not the digest of the chain's last event"
            result.breaks.append(Break(HEAD, detail, **at))


def _anchor_head_checked(result: Verification, anchors: list[GovernanceAnchor]) -> None:
    """The anchors' head names the last anchor; anchors without a head, or a head past the last
    anchor (anchors deleted from the end), are breaks."""
    head = GovernanceAnchorHead.objects.filter(pk=1).first()
    last_seq, last_hash = (anchors[-1].seq, anchors[-1].hash) if anchors else (0, GENESIS)
    if head is None:
        if anchors:
            result.breaks.append(Break(HEAD, "the anchors have no head", anchor=last_seq))
        return
    if head.seq > last_seq:
        detail = f"the anchors' head names anchor {head.seq}, the anchors end at {last_seq}"
        result.breaks.append(Break(MISSING, detail, anchor=head.seq))
    elif (head.seq, head.hash) != (last_seq, last_hash):
        detail = f"the anchors' head names anchor {head.seq}, the anchors end at {last_seq}"
        if head.seq == last_seq:
            detail = "the anchors' head's digest is not the digest of the last anchor"
        result.breaks.append(Break(HEAD, detail, anchor=last_seq))
