"""The governance log is hash-chained: ``verify_governance_log`` names the first edited, deleted or
inserted event, on SQLite and on PostgreSQL (where the attacker first disables the append-only
trigger, as the table's owner can)."""

from __future__ import annotations

import hashlib

import pytest

from governance.chain.canonical import GENESIS
from governance.chain.verify import EDITED, HEAD, MISSING, UNLINKED, Break, governance_log_verify
from governance.chain.writes import anchor_record, writer_chain
from governance.models import GovernanceEvent, GovernanceLogHead
from tests.governance.log_tamper import (
    ANCHORS,
    BOTH,
    EVENTS,
    HEADS,
    anchor_file,
    as_attacker,
    events_write,
    verify_command,
)

pytestmark = [BOTH, pytest.mark.django_db(transaction=True)]


def test_events_written_through_the_services_verify(database):
    events = events_write(4)
    chain = writer_chain()
    assert [(e.chain, e.seq) for e in events] == [(chain, n) for n in range(1, 5)]
    assert events[0].prev_hash == GENESIS
    assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
    assert GovernanceLogHead.objects.values_list("chain", "seq", "hash").get() == (chain, 4, events[-1].hash)
    assert verify_command() == (
        0,
        f"Governance log intact: 4 events in 1 chains, 0 anchors; no anchor file at {anchor_file()}.\n",
        "",
    )


def test_an_edited_event_is_named(database):
    events = events_write(4)
    with as_attacker() as cursor:
        cursor.execute(f"UPDATE {EVENTS} SET api_client = %s WHERE id = %s", ["someone-else", events[1].pk])
    chain = events[1].chain
    assert governance_log_verify().breaks == [
        Break(EDITED, "its content does not match its digest", event_id=events[1].pk, chain=chain, seq=2)
    ]
    code, out, err = verify_command()
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"Governance log BROKEN: 1 problem(s) in 4 events in 1 chains, 0 anchors; no anchor file at {anchor_file()}.",
        f"First broken link: event {events[1].pk}, chain {chain} position 2: edited: its content does not "
        "match its digest",
    ]


def test_an_edited_event_whose_digest_was_recomputed_breaks_the_next_link(database):
    events = events_write(3)
    forged = hashlib.sha256(b"what an attacker without the key can compute").hexdigest()
    with as_attacker() as cursor:
        cursor.execute(
            f"UPDATE {EVENTS} SET reason = %s, hash = %s WHERE id = %s", ["nothing", forged, events[0].pk]
        )
    chain = events[0].chain
    assert governance_log_verify().breaks == [
        Break(EDITED, "its content does not match its digest", event_id=events[0].pk, chain=chain, seq=1),
        Break(
            UNLINKED,
            "its previous digest is not the digest of the event before it",
            event_id=events[1].pk,
            chain=chain,
            seq=2,
        ),
    ]


def test_a_deleted_event_is_named_at_the_event_after_it(database):
    events = events_write(4)
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE id = %s", [events[1].pk])
    chain = events[2].chain
    assert governance_log_verify().breaks == [
        Break(MISSING, "positions 2 to 2 are gone", event_id=events[2].pk, chain=chain, seq=3)
    ]
    code, _, err = verify_command()
    assert code == 1
    assert err.splitlines()[1] == (
        f"First broken link: event {events[2].pk}, chain {chain} position 3: missing: positions 2 to 2 are gone"
    )


def test_an_inserted_event_is_named(database):
    events = events_write(2)
    last = events[-1]
    forged = hashlib.sha256(b"an event nobody recorded").hexdigest()
    with as_attacker() as cursor:
        cursor.execute(
            f"INSERT INTO {EVENTS} (created_at, correlation_id, decision, outcome, source_kind, source_identifier,"
            " data_class, ceiling, zone, reason, provider, model, configuration, api_client, run, step,"
            " chain, seq, prev_hash, hash, key_id)"
            " VALUES (%s, 'req-1', 'reclassified', 'observed', '', '', '', '', '', 'forged', '', '', '', "
            " 'acme', '', NULL, %s, %s, %s, %s, '')",
            [last.created_at, last.chain, last.seq + 1, last.hash, forged],
        )
        cursor.execute(
            f"UPDATE {HEADS} SET seq = %s, hash = %s WHERE chain = %s", [last.seq + 1, forged, last.chain]
        )
    inserted = GovernanceEvent.objects.get(reason="forged")
    assert governance_log_verify().breaks == [
        Break(EDITED, "its content does not match its digest", event_id=inserted.pk, chain=last.chain, seq=3)
    ]
    assert verify_command()[0] == 1


def test_an_inserted_event_left_beside_the_head_is_named_twice(database):
    events = events_write(2)
    last = events[-1]
    with as_attacker() as cursor:
        cursor.execute(
            f"INSERT INTO {EVENTS} (created_at, correlation_id, decision, outcome, source_kind, source_identifier,"
            " data_class, ceiling, zone, reason, provider, model, configuration, api_client, run, step,"
            " chain, seq, prev_hash, hash, key_id)"
            " SELECT created_at, correlation_id, decision, outcome, source_kind, source_identifier, data_class,"
            " ceiling, zone, reason, provider, model, configuration, api_client, run, step, chain, seq + 1,"
            f" hash, hash, key_id FROM {EVENTS} WHERE id = %s",
            [last.pk],
        )
    copy = GovernanceEvent.objects.get(chain=last.chain, seq=3)
    assert governance_log_verify().breaks == [
        Break(EDITED, "its content does not match its digest", event_id=copy.pk, chain=last.chain, seq=3),
        Break(
            HEAD,
            "the head names position 2, the chain ends at position 3",
            event_id=copy.pk,
            chain=last.chain,
            seq=3,
        ),
    ]


def test_anchors_bind_the_heads_and_catch_a_removed_tail(database):
    events = events_write(3)
    first = anchor_record()
    assert first is not None and first.heads == [[events[0].chain, 3, events[-1].hash]]
    assert anchor_record() is None  # no head moved since
    more = events_write(1)
    second = anchor_record()
    assert (second.seq, second.prev_hash) == (2, first.hash)
    assert verify_command()[0] == 0
    # Remove the last event and wind the head back: the chain alone looks whole, the anchor does not.
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE id = %s", [more[0].pk])
        cursor.execute(f"UPDATE {HEADS} SET seq = 3, hash = %s", [events[-1].hash])
    assert governance_log_verify().breaks == [
        Break(
            MISSING,
            "anchor 2 saw position 4, the chain now ends at 3",
            chain=events[0].chain,
            seq=4,
            anchor=2,
        )
    ]


def test_an_edited_anchor_is_named(database):
    events_write(2)
    anchor = anchor_record()
    with as_attacker() as cursor:
        cursor.execute(f"UPDATE {ANCHORS} SET heads = %s WHERE id = %s", ["[]", anchor.pk])
    assert governance_log_verify().breaks == [
        Break(EDITED, "its content does not match its digest", anchor=1)
    ]
