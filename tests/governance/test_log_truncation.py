"""Cutting the end off the governance log shows: a chain's tail cut with its head wound back, a whole
chain deleted with its head, every event and head deleted, the newest anchors deleted with the
anchors' head wound back, and every row of the log deleted. The anchors kept outside the database
(the anchor file, and the log stream standing in for it) still name what was there; on SQLite and
on PostgreSQL."""

from __future__ import annotations

import json
import logging

import pytest
from django.db import transaction

from config.logs import JsonLogFormatter
from governance.chain import writes
from governance.chain.external import anchor_document
from governance.chain.keys import log_keys
from governance.chain.verify import EDITED, HEAD, MISSING, Break, governance_log_verify
from governance.chain.writes import anchor_record
from governance.models import GovernanceAnchor, GovernanceEvent
from tests.governance.log_tamper import (
    ANCHOR_HEAD,
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


@pytest.fixture
def on_chain(monkeypatch):
    """``on_chain(chain, count)`` writes ``count`` events to ``chain`` (as a writer mapped to it)."""

    def write(chain: int, count: int) -> list[GovernanceEvent]:
        with monkeypatch.context() as patch:
            patch.setattr(writes, "writer_chain", lambda: chain)
            return events_write(count)

    return write


def everything_deleted() -> None:
    with as_attacker() as cursor:
        for table in (EVENTS, HEADS, ANCHORS, ANCHOR_HEAD):
            cursor.execute(f"DELETE FROM {table}")


def test_a_cut_tail_hidden_with_the_newest_anchors_and_both_heads_wound_back_is_named(
    database, on_chain, tmp_path
):
    kept = on_chain(1, 3)
    first = anchor_record()
    cut = on_chain(1, 2)
    assert anchor_record().seq == 2
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE id IN (%s, %s)", [cut[0].pk, cut[1].pk])
        cursor.execute(f"UPDATE {HEADS} SET seq = 3, hash = %s WHERE chain = 1", [kept[-1].hash])
        cursor.execute(f"DELETE FROM {ANCHORS} WHERE seq = 2")
        cursor.execute(f"UPDATE {ANCHOR_HEAD} SET seq = 1, hash = %s", [first.hash])
    # What is left in the database is consistent: only the copies outside it show the cut.
    assert governance_log_verify(tmp_path / "no-such-file.jsonl").breaks == []
    assert governance_log_verify().breaks == [
        Break(MISSING, "anchor 2 saw position 5, the chain now ends at 3", chain=1, seq=5, anchor=2),
        Break(MISSING, "anchors 2 to 2 are in the anchor file and gone from the database", anchor=2),
    ]


def test_the_newest_anchors_deleted_are_named_by_the_anchors_head(database, on_chain, tmp_path):
    on_chain(1, 2)
    anchor_record()
    on_chain(1, 1)
    anchor_record()
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {ANCHORS} WHERE seq = 2")
    assert governance_log_verify(tmp_path / "no-such-file.jsonl").breaks == [
        Break(MISSING, "the anchors' head names anchor 2, the anchors end at 1", anchor=2)
    ]


def test_a_whole_chain_deleted_with_its_head_is_named(database, on_chain):
    on_chain(1, 2)
    gone = on_chain(2, 3)
    anchor_record()
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS} WHERE chain = 2")
        cursor.execute(f"DELETE FROM {HEADS} WHERE chain = 2")
    chain_gone = Break(MISSING, "anchor 1 saw position 3, the chain now ends at 0", chain=2, seq=3, anchor=1)
    assert governance_log_verify().breaks == [chain_gone]
    # The anchor deleted as well, with the anchors' head: the anchor file still names the chain.
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {ANCHORS}")
        cursor.execute(f"DELETE FROM {ANCHOR_HEAD}")
    assert governance_log_verify().breaks == [
        chain_gone,
        Break(MISSING, "anchors 1 to 1 are in the anchor file and gone from the database", anchor=1),
    ]
    assert len(gone) == 3


def test_every_event_and_head_deleted_is_named(database, on_chain):
    on_chain(1, 2)
    on_chain(2, 1)
    anchor_record()
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {EVENTS}")
        cursor.execute(f"DELETE FROM {HEADS}")
    result = governance_log_verify()
    assert (result.events, result.chains, result.anchors) == (0, 0, 1)
    assert result.breaks == [
        Break(MISSING, "anchor 1 saw position 2, the chain now ends at 0", chain=1, seq=2, anchor=1),
        Break(MISSING, "anchor 1 saw position 1, the chain now ends at 0", chain=2, seq=1, anchor=1),
    ]


def test_every_row_of_the_log_deleted_is_named_from_the_anchor_file(database, on_chain):
    on_chain(1, 2)
    anchor_record()
    on_chain(2, 1)
    anchor_record()
    everything_deleted()
    expected = [
        Break(MISSING, "anchor 1 saw position 2, the chain now ends at 0", chain=1, seq=2, anchor=1),
        Break(MISSING, "anchor 2 saw position 1, the chain now ends at 0", chain=2, seq=1, anchor=2),
        Break(MISSING, "anchors 1 to 2 are in the anchor file and gone from the database", anchor=1),
    ]
    assert governance_log_verify().breaks == expected
    # A plain run of the command reads the anchor file on its own.
    code, out, err = verify_command()
    assert (code, out) == (1, "")
    assert err.splitlines()[:2] == [
        f"Governance log BROKEN: 3 problem(s) in 0 events in 0 chains, 0 anchors; 2 anchors in {anchor_file()}.",
        "First broken link: anchor 1, chain 1 position 2: missing: anchor 1 saw position 2, the chain now "
        "ends at 0",
    ]


def test_the_json_log_stream_stands_in_for_the_anchor_file(database, on_chain, caplog, tmp_path):
    with caplog.at_level(logging.INFO, logger="governance.chain.external"):
        on_chain(1, 2)
        anchor_record()
        on_chain(1, 1)
        anchor_record()
    formatter = JsonLogFormatter()
    shipped = tmp_path / "shipped-log.jsonl"
    lines = [json.dumps({"level": "INFO", "message": "an unrelated line"})]
    lines += [formatter.format(record) for record in caplog.records]
    shipped.write_text("\n".join(lines) + "\n")
    everything_deleted()
    anchor_file().unlink()  # the file is gone too: the shipped log is what is left outside
    assert verify_command("--anchor-file", str(shipped))[0] == 1
    assert governance_log_verify(shipped).breaks == [
        Break(MISSING, "anchor 1 saw position 2, the chain now ends at 0", chain=1, seq=2, anchor=1),
        Break(MISSING, "anchors 1 to 2 are in the anchor file and gone from the database", anchor=1),
    ]
    # With every copy outside the database gone as well, nothing is left to tell (the stated limit).
    assert verify_command()[0] == 0


def test_a_head_missing_where_its_chain_has_events_is_a_break(database, on_chain):
    events = on_chain(1, 2)
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {HEADS}")
    assert governance_log_verify().breaks == [
        Break(HEAD, "the chain has events but no head", event_id=events[-1].pk, chain=1, seq=2)
    ]


def test_anchors_without_their_head_are_a_break(database, on_chain):
    on_chain(1, 1)
    anchor_record()
    with as_attacker() as cursor:
        cursor.execute(f"DELETE FROM {ANCHOR_HEAD}")
    assert governance_log_verify().breaks == [Break(HEAD, "the anchors have no head", anchor=1)]


def test_a_forged_or_unreadable_copy_in_the_anchor_file_is_named_and_not_believed(database, on_chain):
    on_chain(1, 2)
    anchor = anchor_record()
    forged = json.loads(anchor_document(anchor))
    forged.update(seq=2, heads=[[1, 9, forged["heads"][0][2]]])
    with anchor_file().open("a") as file:
        file.write(json.dumps(forged) + "\n")
        file.write("governance log anchor: {cut short\n")
    assert governance_log_verify().breaks == [
        Break(EDITED, "line 3 of the anchor file cannot be read as an anchor"),
        Break(EDITED, "its copy in the anchor file does not match its digest", anchor=2),
    ]


def test_an_anchor_reaches_the_file_once_committed_and_never_when_rolled_back(database, on_chain):
    on_chain(1, 1)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert anchor_record() is not None
        raise RuntimeError("the caller's transaction fails")
    assert not anchor_file().exists()
    assert GovernanceAnchor.objects.count() == 0
    anchor = anchor_record()
    assert anchor_file().read_text().splitlines() == [anchor_document(anchor)]
    assert json.loads(anchor_document(anchor)) == {
        "seq": 1,
        "created_at": anchor.created_at.isoformat(timespec="microseconds"),
        "heads": [[1, 1, GovernanceEvent.objects.get().hash]],
        "prev_hash": "0" * 64,
        "hash": anchor.hash,
        "key_id": log_keys().current_id,
    }
    assert verify_command()[0] == 0
