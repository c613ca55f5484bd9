"""Verifying the governance log: every chain from its first event, every anchor, every head.

Reads one consistent snapshot (a ``REPEATABLE READ`` transaction on PostgreSQL; SQLite's read
transaction is one), streaming the events in ``(chain, seq)`` order: memory grows with the number of
chains and anchors, not of events. Reports every break it finds, in the order found (chains in
order, then anchors, then heads); the first is the first broken link.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction

from governance.chain.canonical import (
    ANCHOR_FIELDS,
    EVENT_FIELDS,
    GENESIS,
    anchor_digest,
    event_digest,
    log_key,
)
from governance.models import GovernanceAnchor, GovernanceEvent, GovernanceLogHead

EDITED = "edited"  # its content no longer matches its digest
UNLINKED = "unlinked"  # it does not name the digest of the event before it
MISSING = "missing"  # events of the chain are gone (a gap in its positions, or a tail an anchor saw)
HEAD = "head"  # the head row disagrees with the chain's last event


@dataclass(frozen=True)
class Break:
    """One broken link: the event (or anchor) where it shows, its chain and position, and what is
    wrong (``kind`` one of ``edited``, ``unlinked``, ``missing``, ``head``; ``detail`` in words)."""

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
    """What a verification found: ``events``, ``chains`` and ``anchors`` checked, and the breaks."""

    events: int = 0
    chains: int = 0
    anchors: int = 0
    breaks: list[Break] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.breaks


def governance_log_verify() -> Verification:
    """Verify every chain, every anchor and every head of the log (see the module docstring)."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        # Only a transaction's first statement may set its isolation (inside a caller's: its snapshot).
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _verified(log_key())


def _verified(key: bytes) -> Verification:
    result = Verification()
    anchors = list(GovernanceAnchor.objects.order_by("seq"))
    # Each position an anchor names, with the digest it saw and the anchors that saw it.
    seen: dict[tuple[int, int], list[tuple[str, int]]] = defaultdict(list)
    for anchor in anchors:
        for chain, seq, digest in anchor.heads:
            seen[(chain, seq)].append((digest, anchor.seq))
    lasts = _chains_checked(result, key, seen)
    _anchors_checked(result, key, anchors, seen, lasts)
    _heads_checked(result, lasts)
    return result


def _events() -> Iterator[dict[str, Any]]:
    rows = GovernanceEvent.objects.order_by("chain", "seq").values("id", "hash", *EVENT_FIELDS)
    yield from rows.iterator(chunk_size=2000)


def _chains_checked(
    result: Verification, key: bytes, seen: dict[tuple[int, int], list[tuple[str, int]]]
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
        if event_digest(row, key) != row["hash"]:
            result.breaks.append(Break(EDITED, "its content does not match its digest", **at))
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
    key: bytes,
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
        if anchor_digest(values, key) != anchor.hash:
            result.breaks.append(Break(EDITED, "its content does not match its digest", **at))
        prev, expected_seq = anchor.hash, anchor.seq + 1
        result.anchors += 1
    for (chain, seq), sightings in sorted(seen.items()):
        last_seq = lasts.get(chain, (0, GENESIS, None))[0]
        if seq > last_seq:
            seer = sightings[0][1]
            detail = f"anchor {seer} saw position {seq}, the chain now ends at {last_seq}"
            result.breaks.append(Break(MISSING, detail, chain=chain, seq=seq, anchor=seer))


def _heads_checked(result: Verification, lasts: dict[int, tuple[int, str, int | None]]) -> None:
    """Each head row names its chain's last event (a missing head row is rebuilt by the next append)."""
    for head in GovernanceLogHead.objects.order_by("chain"):
        last_seq, last_hash, event_id = lasts.get(head.chain, (0, GENESIS, None))
        if (head.seq, head.hash) != (last_seq, last_hash):
            detail = f"the head names position {head.seq}, the chain ends at position {last_seq}"
            if head.seq == last_seq:
                detail = "the head's digest is not the digest of the chain's last event"
            result.breaks.append(Break(HEAD, detail, event_id=event_id, chain=head.chain, seq=last_seq))
