"""Concurrent writers keep every chain whole, threads that follow one another keep to one chain,
and an upgraded database's earlier events are chained."""

from __future__ import annotations

import os
import threading
from collections import Counter

import pytest
from django.db import DatabaseError, connection, connections

from governance.chain.verify import governance_log_verify
from governance.chain.writes import writer_chain
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


def test_threads_that_follow_one_another_keep_to_one_chain():
    """runserver answers each request on a new thread: the log must not open a chain per request."""
    chains: list[int] = []
    for _ in range(11):
        thread = threading.Thread(target=lambda: chains.append(writer_chain()))
        thread.start()
        thread.join()
    assert len(chains) == 11
    assert set(chains) == {chains[0]}


def test_threads_alive_at_once_write_to_different_chains_and_give_them_back(settings):
    settings.GOVERNANCE_LOG_CHAINS = 16
    alive = threading.Barrier(4)
    chains: list[int] = []

    def write() -> None:
        chains.append(writer_chain())
        alive.wait()  # every thread holds its chain until all four have one

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(chains)) == 4
    # They ended: the next thread takes the lowest chain again.
    after: list[int] = []
    thread = threading.Thread(target=lambda: after.append(writer_chain()))
    thread.start()
    thread.join()
    assert after == [min(chains, key=lambda chain: (chain - os.getpid()) % 16)]


def test_live_threads_past_the_number_of_chains_share_them(settings):
    settings.GOVERNANCE_LOG_CHAINS = 2
    alive = threading.Barrier(5)
    chains: list[int] = []

    def write() -> None:
        chains.append(writer_chain())
        alive.wait()

    threads = [threading.Thread(target=write) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(Counter(chains).values()) == [2, 3]
