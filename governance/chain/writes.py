"""Appending to the chains, and anchoring their heads.

**Chains per writer.** A thread keeps to one chain for its life, so writers in different threads and
processes mostly lock different head rows, and a transaction only ever holds one head lock: two
writers cannot wait on each other's heads in opposite orders. The chain is the process's id plus the
thread's *slot*, modulo ``GOVERNANCE_LOG_CHAINS``: a thread takes the lowest slot no live thread of
its process holds, and gives it back when it ends. So concurrent threads write to different chains,
while a server that runs each request on a new thread (``runserver``) keeps writing to the same few,
as many as it ever ran at once, instead of spreading a handful of events over every chain. An event's
position is ``(chain, seq)``; the unique constraint on it makes a forked chain impossible even where
the lock is not (SQLite has no row locks, and serialises every write transaction instead).

**Cost.** One append is a ``SELECT ... FOR UPDATE`` of the head, the ``INSERT`` and an ``UPDATE`` of the
head, in one transaction (a savepoint inside the caller's); the head stays locked until the outermost
transaction ends, so events written inside a long transaction hold their chain that long (measured in
``bench/governance_log.py``).
"""

from __future__ import annotations

import heapq
import logging
import os
import threading
import weakref
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from governance.chain.canonical import ANCHOR_FIELDS, EVENT_FIELDS, GENESIS, anchor_digest, event_digest
from governance.chain.external import anchor_publish
from governance.chain.keys import log_keys
from governance.models import GovernanceAnchor, GovernanceAnchorHead, GovernanceEvent, GovernanceLogHead

logger = logging.getLogger(__name__)

CHAIN_FIELDS = ("chain", "seq", "prev_hash", "hash")


class _Slots:
    """The writer slots of one process: the lowest free one is taken, and given back by the thread's
    end (its thread-local claim is released then)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.free: list[int] = []
        self.taken = 0
        self.lock = threading.Lock()

    def take(self) -> int:
        with self.lock:
            if self.free:
                return heapq.heappop(self.free)
            self.taken += 1
            return self.taken - 1

    def give_back(self, slot: int) -> None:
        with self.lock:
            heapq.heappush(self.free, slot)


class _Claim:
    """A thread's slot in its process; collected (and the slot given back) when the thread ends."""

    def __init__(self, slots: _Slots) -> None:
        self.pid = slots.pid
        self.slot = slots.take()
        weakref.finalize(self, slots.give_back, self.slot)


_slots = _Slots()
_slots_lock = threading.Lock()
_writer = threading.local()


def writer_chain() -> int:
    """The chain this thread appends to: fixed for the thread's life in this process (a forked worker
    takes its own slot, not its parent's)."""
    global _slots
    pid = os.getpid()
    claim: _Claim | None = getattr(_writer, "claim", None)
    if claim is None or claim.pid != pid:
        with _slots_lock:
            if _slots.pid != pid:  # a forked child starts with no slot taken
                _slots = _Slots()
        claim = _writer.claim = _Claim(_slots)
    return (pid + claim.slot) % settings.GOVERNANCE_LOG_CHAINS


def event_append(event: GovernanceEvent) -> GovernanceEvent:
    """Store the unsaved, validated ``event`` as the next link of this writer's chain: its chain
    fields set from the locked head, its digest computed, the head moved to it. Raises what the
    database raises (nothing is stored then); the time of the event is its ``created_at`` as set."""
    with transaction.atomic():
        head = _head_locked(writer_chain())
        event.chain, event.seq, event.prev_hash = head.chain, head.seq + 1, head.hash
        event.created_at = event.created_at or timezone.now()
        keys = log_keys()
        event.key_id = keys.current_id
        event.hash = event_digest({name: getattr(event, name) for name in EVENT_FIELDS}, keys.current)
        event.save()
        head.seq, head.hash = event.seq, event.hash
        head.save(update_fields=["seq", "hash"])
    return event


def _head_locked(chain: int) -> GovernanceLogHead:
    """The head row of ``chain``, locked to this transaction. A missing head of a new chain is created
    at its start. A missing head of a chain that has events should not happen (heads are never
    deleted): it is logged as an error and rebuilt from the chain's last event, so the log goes on,
    and the anchors since then (in the database and outside it) still show any tail cut before."""
    head = GovernanceLogHead.objects.select_for_update().filter(pk=chain).first()
    if head is not None:
        return head
    last = GovernanceEvent.objects.filter(chain=chain).order_by("-seq").values_list("seq", "hash").first()
    seq, digest = last if last is not None else (0, GENESIS)
    if last is not None:
        logger.error("governance log chain %s had events but no head: rebuilt at position %s", chain, seq)
    try:
        with transaction.atomic():
            GovernanceLogHead.objects.create(chain=chain, seq=seq, hash=digest)
    except IntegrityError:
        pass  # another writer created it first: take its row
    return GovernanceLogHead.objects.select_for_update().get(pk=chain)


def heads_read() -> list[list[int | str]]:
    """Every chain's head as ``[chain, seq, digest]``, in chain order, read in one statement."""
    return [
        [chain, seq, digest]
        for chain, seq, digest in GovernanceLogHead.objects.order_by("chain").values_list(
            "chain", "seq", "hash"
        )
    ]


def anchor_record() -> GovernanceAnchor | None:
    """An anchor of every chain's current head, chained to the last anchor and moving the anchors'
    head to it; None when no head moved since the last anchor, or there is no head yet (nothing to
    bind). Anchorers take turns on the anchors' head row (anchoring is rare; event writers never
    touch it), and the unique ``seq`` stops a fork where there are no row locks: the loser raises
    ``IntegrityError``. Once committed, the anchor is also logged and appended to
    ``GOVERNANCE_LOG_ANCHOR_FILE`` (``governance.chain.external``), copies outside the database."""
    with transaction.atomic():
        head = _anchor_head_locked()
        heads = heads_read()
        last = GovernanceAnchor.objects.filter(seq=head.seq).values_list("heads", flat=True).first()
        if not heads or heads == last:
            return None
        keys = log_keys()
        anchor = GovernanceAnchor(
            seq=head.seq + 1,
            created_at=timezone.now(),
            heads=heads,
            prev_hash=head.hash,
            key_id=keys.current_id,
        )
        anchor.hash = anchor_digest({name: getattr(anchor, name) for name in ANCHOR_FIELDS}, keys.current)
        anchor.save()
        head.seq, head.hash = anchor.seq, anchor.hash
        head.save(update_fields=["seq", "hash"])
        path = Path(settings.GOVERNANCE_LOG_ANCHOR_FILE)
        transaction.on_commit(lambda: anchor_publish(anchor, path))
    return anchor


def _anchor_head_locked() -> GovernanceAnchorHead:
    """The anchors' head row, locked to this transaction; created when missing, at the last anchor
    (logged as an error when there are anchors: the head is never deleted)."""
    head = GovernanceAnchorHead.objects.select_for_update().filter(pk=1).first()
    if head is not None:
        return head
    last = GovernanceAnchor.objects.order_by("-seq").values_list("seq", "hash").first()
    seq, digest = last if last is not None else (0, GENESIS)
    if last is not None:
        logger.error("the governance log anchors had no head: rebuilt at anchor %s", seq)
    try:
        with transaction.atomic():
            GovernanceAnchorHead.objects.create(pk=1, seq=seq, hash=digest)
    except IntegrityError:
        pass  # another anchorer created it first: take its row
    return GovernanceAnchorHead.objects.select_for_update().get(pk=1)
