"""A tool call's claim and its result are written only while the step's worker holds the run's lease
(``agents/runtime/held_writes.py``): one statement on PostgreSQL (the services run), two in one
transaction on SQLite; either way the row stored is the one the ORM would store, and a lost lease or a
unique conflict writes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import AgentRun, RunMessage, ToolCallRecord
from agents.runtime.held_writes import held_insert
from agents.runtime.leases import HeldLease, LeaseLost, lease_claim
from agents.services import run_create
from catalog.models.sql import row_inserted
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration

# The fast suite runs on SQLite, the services suite on PostgreSQL: each runs the variant marked for it.
DATABASES = [
    pytest.param("default", marks=pytest.mark.django_db),
    pytest.param("services", marks=[pytest.mark.services, pytest.mark.django_db(transaction=True)]),
]


def claimed_run(fake_provider) -> tuple[AgentRun, HeldLease]:
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    assert lease_claim(run_id=str(run.id), step_index=0, worker="w1").claimed
    return run, HeldLease(run_id=str(run.id), step_index=0, worker="w1")


def lease_of(run: AgentRun) -> tuple[str, object]:
    return tuple(AgentRun.objects.filter(id=run.id).values_list("lease_owner", "lease_expires_at").get())


def result_fields(run: AgentRun, position: int) -> dict[str, object]:
    return {
        "run": run,
        "position": position,
        "step_index": 0,
        "role": "tool",
        "content": "Warm and brief.",
        "tool_call_id": "c1",
        "tool_name": "snippets_by_tag",
        "data_class": DataClass.PUBLIC_CONTENT,
        "integrity": "trusted",
        "screening": "",
        "quarantined": "",
    }


STORED = ("position", "step_index", "role", "content", "tool_calls", "tool_call_id", "tool_name")
STORED += ("data_class", "receiver_class", "label_observed", "integrity", "screening", "quarantined")


@pytest.mark.parametrize("database", DATABASES)
def test_a_held_lease_stores_the_row_the_orm_would_and_renews_the_lease(database, fake_provider):
    run, held = claimed_run(fake_provider)
    AgentRun.objects.filter(id=run.id).update(lease_expires_at=timezone.now() + timedelta(seconds=1))
    before = timezone.now()

    held_insert(held, RunMessage, **result_fields(run, 0))
    RunMessage.objects.create(**result_fields(run, 1))  # the ORM's own insert, for comparison

    written, created = (RunMessage.objects.filter(run=run, position=p).values(*STORED).get() for p in (0, 1))
    assert written == {**created, "position": 0}
    assert RunMessage.objects.get(run=run, position=0).created_at >= before
    owner, expires = lease_of(run)
    assert owner == "w1" and expires > before + timedelta(seconds=2)


@pytest.mark.parametrize("database", DATABASES)
@pytest.mark.parametrize(
    "lost",
    [
        pytest.param(lambda held: HeldLease(held.run_id, 0, "w2"), id="another worker"),
        pytest.param(lambda held: HeldLease(held.run_id, 1, "w1"), id="a step the run is not at"),
    ],
)
def test_a_lease_not_held_writes_nothing(database, lost, fake_provider):
    run, held = claimed_run(fake_provider)
    stored = lease_of(run)

    with pytest.raises(LeaseLost):
        held_insert(lost(held), RunMessage, **result_fields(run, 0))
    with pytest.raises(LeaseLost):
        held_insert(
            lost(held), ToolCallRecord, run=run, step_index=0, call_id="c1", tool_name="t", effect="read_only",
            status="started",
        )  # fmt: skip

    assert not RunMessage.objects.filter(run=run).exists()
    assert not ToolCallRecord.objects.filter(run=run).exists()
    assert lease_of(run) == stored


@pytest.mark.parametrize("database", DATABASES)
def test_a_unique_conflict_writes_nothing_and_leaves_an_outer_transaction_usable(database, fake_provider):
    run, held = claimed_run(fake_provider)
    claim = {"run": run, "step_index": 0, "call_id": "c1", "tool_name": "t", "effect": "read_only"}
    held_insert(held, ToolCallRecord, **claim, status="started")

    with transaction.atomic():
        with pytest.raises(IntegrityError):
            held_insert(held, ToolCallRecord, **claim, status="completed")
        # Still usable: the failed write was a savepoint.
        assert list(ToolCallRecord.objects.filter(run=run).values_list("status", flat=True)) == ["started"]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_lease_check_and_the_insert_are_one_statement(fake_provider):
    run, held = claimed_run(fake_provider)
    with CaptureQueriesContext(connection) as statements:
        held_insert(held, RunMessage, **result_fields(run, 0))
    assert len(statements) == 1, [query["sql"][:80] for query in statements]
    assert RunMessage.objects.filter(run=run, position=0).exists()


@pytest.mark.parametrize("database", DATABASES)
def test_a_step_rows_insert_stores_what_the_orms_would_and_returns_the_saved_instance(
    database, fake_provider
):
    run, _ = claimed_run(fake_provider)
    message = row_inserted(RunMessage(**result_fields(run, 0)))
    RunMessage.objects.create(**result_fields(run, 1))

    written, created = (RunMessage.objects.filter(run=run, position=p).values(*STORED).get() for p in (0, 1))
    assert written == {**created, "position": 0}
    assert message.pk is not None and not message._state.adding
    assert RunMessage.objects.get(pk=message.pk).content == "Warm and brief."
