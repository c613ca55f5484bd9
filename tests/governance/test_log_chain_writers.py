"""Concurrent writers keep every chain whole, and an upgraded database's earlier events are chained."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import DatabaseError, connection, connections

from governance.chain.verify import governance_log_verify
from governance.models import GovernanceEvent, GovernanceLogHead
from governance.services import EventContext, enforced_event_record
from governance.tasks import governance_log_anchor_task
from governance.vocabulary import Decision
from tests.migration_helpers import migrate_to, migrate_to_latest

THREADS, EACH = 8, 25


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_keep_every_chain_whole():
    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            start.wait()
            context = EventContext(correlation_id=f"worker-{worker}")
            for n in range(EACH):
                enforced_event_record(context=context, decision=Decision.SECRET_REDACTED, reason=f"n{n}")
        except BaseException as error:  # reported below, with the thread's name
            failures.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    result = governance_log_verify()
    assert (result.breaks, result.events) == ([], THREADS * EACH)
    per_chain = Counter(GovernanceEvent.objects.values_list("chain", flat=True))
    assert len(per_chain) > 1  # the writers spread over chains
    heads = dict(GovernanceLogHead.objects.values_list("chain", "seq"))
    assert heads == dict(per_chain)
    # A writer keeps to one chain, in its own order.
    for worker in range(THREADS):
        rows = list(GovernanceEvent.objects.filter(correlation_id=f"worker-{worker}").order_by("seq"))
        assert len({row.chain for row in rows}) == 1
        assert [row.reason for row in rows] == [f"n{n}" for n in range(EACH)]


BEFORE, AFTER = [("governance", "0009_publication_version")], [("governance", "0010_event_hash_chain")]


@pytest.mark.parametrize("database", ["default", pytest.param("postgresql", marks=pytest.mark.services)])
@pytest.mark.django_db(transaction=True)
def test_the_upgrade_chains_earlier_events_in_id_order(database):
    old = migrate_to(BEFORE).get_model("governance", "GovernanceEvent")
    ids = [
        old.objects.create(correlation_id=f"c{n}", decision="context_blocked", outcome="enforced").pk
        for n in range(5)
    ]
    migrate_to(AFTER)
    migrate_to_latest()
    rows = list(GovernanceEvent.objects.order_by("id").values_list("id", "chain", "seq"))
    assert rows == [(pk, 0, n) for n, pk in enumerate(ids, start=1)]
    assert GovernanceLogHead.objects.values_list("chain", "seq").get() == (0, 5)
    enforced_event_record(
        context=EventContext(correlation_id="after"), decision=Decision.SECRET_REDACTED, reason="new"
    )
    result = governance_log_verify()
    assert (result.breaks, result.events) == ([], 6)
    if connection.vendor == "postgresql":  # the trigger is on again after the backfill
        with pytest.raises(DatabaseError, match="append-only"), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {GovernanceEvent._meta.db_table}")


@pytest.mark.django_db
def test_beat_anchors_the_heads_periodically(settings):
    assert settings.CELERY_BEAT_SCHEDULE["anchor-governance-log"] == {
        "task": "governance.tasks.governance_log_anchor_task",
        "schedule": settings.GOVERNANCE_LOG_ANCHOR_SECONDS,
    }
    assert governance_log_anchor_task.delay().get() is None  # an empty log: nothing to bind
    enforced_event_record(
        context=EventContext(correlation_id="c"), decision=Decision.SECRET_REDACTED, reason="r"
    )
    assert governance_log_anchor_task.delay().get() == 1
    assert governance_log_anchor_task.delay().get() is None  # no head moved since
    assert governance_log_verify().anchors == 1
