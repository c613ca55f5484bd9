"""Appending to the chains, and anchoring their heads.

**Chains per writer.** A thread keeps to one chain for its life (its process id plus a per-process
counter, modulo ``GOVERNANCE_LOG_CHAINS``), so writers in different threads and processes mostly lock
different head rows, and a transaction only ever holds one head lock: two writers cannot wait on each
other's heads in opposite orders. An event's position is ``(chain, seq)``; the unique constraint on
it makes a forked chain impossible even where the lock is not (SQLite has no row locks, and serialises
every write transaction instead).

**Cost.** One append is a ``SELECT ... FOR UPDATE`` of the head, the ``INSERT`` and an ``UPDATE`` of the
head, in one transaction (a savepoint inside the caller's); the head stays locked until the outermost
transaction ends, so events written inside a long transaction hold their chain that long (measured in
``bench/governance_log.py``).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from governance.chain.canonical import EVENT_FIELDS, GENESIS, anchor_digest, event_digest
from governance.models import GovernanceAnchor, GovernanceEvent, GovernanceLogHead

logger = logging.getLogger(__name__)

CHAIN_FIELDS = ("chain", "seq", "prev_hash", "hash")

_writers = itertools.count()
_writer = threading.local()


def writer_chain() -> int:
    """The chain this thread appends to: fixed for the thread's life in this process (a forked worker
    picks its own, not its parent's)."""
    pid = os.getpid()
    mine: tuple[int, int] | None = getattr(_writer, "chain", None)
    if mine is None or mine[0] != pid:
        mine = (pid, (pid + next(_writers)) % settings.GOVERNANCE_LOG_CHAINS)
        _writer.chain = mine
    return mine[1]


def event_append(event: GovernanceEvent) -> GovernanceEvent:
    """Store the unsaved, validated ``event`` as the next link of this writer's chain: its chain
    fields set from the locked head, its digest computed, the head moved to it. Raises what the
    database raises (nothing is stored then); the time of the event is its ``created_at`` as set."""
    with transaction.atomic():
        head = _head_locked(writer_chain())
        event.chain, event.seq, event.prev_hash = head.chain, head.seq + 1, head.hash
        event.created_at = event.created_at or timezone.now()
        event.hash = event_digest({name: getattr(event, name) for name in EVENT_FIELDS})
        event.save()
        head.seq, head.hash = event.seq, event.hash
        head.save(update_fields=["seq", "hash"])
    return event


def _head_locked(chain: int) -> GovernanceLogHead:
    """The head row of ``chain``, locked to this transaction. A missing head (a new chain, or a
    flushed table) is created from the chain's last event, if any."""
    head = GovernanceLogHead.objects.select_for_update().filter(pk=chain).first()
    if head is not None:
        return head
    last = GovernanceEvent.objects.filter(chain=chain).order_by("-seq").values_list("seq", "hash").first()
    seq, digest = last if last is not None else (0, GENESIS)
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
    """An anchor of every chain's current head, chained to the last anchor; None when no head moved
    since it, or there is none yet (nothing to bind). Concurrent anchoring cannot fork the anchors (their ``seq`` is
    unique): the loser raises ``IntegrityError``. The digest is also logged, so a copy of it lives
    outside the database."""
    heads = heads_read()
    last = GovernanceAnchor.objects.order_by("-seq").first()
    if not heads or (last is not None and last.heads == heads):
        return None
    anchor = GovernanceAnchor(
        seq=last.seq + 1 if last is not None else 1,
        created_at=timezone.now(),
        heads=heads,
        prev_hash=last.hash if last is not None else GENESIS,
    )
    anchor.hash = anchor_digest(
        {"seq": anchor.seq, "prev_hash": anchor.prev_hash, "created_at": anchor.created_at, "heads": heads}
    )
    with transaction.atomic():
        anchor.save()
    logger.info("governance log anchor %s: %s over %s chains", anchor.seq, anchor.hash, len(heads))
    return anchor
