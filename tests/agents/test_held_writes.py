"""A tool call's claim and its result are written only while the step's worker holds the run's lease
(``agents/runtime/held_writes.py``): one statement on PostgreSQL (the services run), two in one
transaction on SQLite; either way the row stored is the one the ORM would store, and a lost lease or a
unique conflict writes nothing."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from psycopg.types.json import Jsonb
from psycopg.types.numeric import Int4

from agents.models import AgentRun, RunMessage, ToolCallRecord
from agents.runtime.held_writes import PARSES_KEPT_UP_TO, distinct_parameters, held_insert
from agents.runtime.leases import HeldLease, LeaseLost, lease_claim
from agents.runtime.step import step_run
from agents.services import run_create
from catalog.models.sql import row_inserted
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

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


def test_a_statements_repeated_values_are_passed_once_each_under_its_own_name():
    # Text choices are written as their value, so a member and the same text are one parameter; a
    # JSON value is never merged, nor are floats, decimals or dates written differently.
    statement = "a = %s, b = %s, c = %s, d = %s, e = %s, f = %s, g = %s, h = %s, i = %s"
    values = ["x", DataClass.PUBLIC_CONTENT, "public_content", Jsonb([]), Jsonb([]), 0.0, -0.0, "x", None]

    sql, named = distinct_parameters(statement, values)

    assert sql == (
        "a = %(v0)s, b = %(v1)s, c = %(v1)s, d = %(v2)s, e = %(v3)s, f = %(v4)s, g = %(v5)s, h = %(v0)s, "
        "i = %(v6)s"
    )
    assert list(named) == ["v0", "v1", "v2", "v3", "v4", "v5", "v6"]
    assert [named[name] for name in ("v0", "v1", "v4", "v6")] == ["x", DataClass.PUBLIC_CONTENT, 0.0, None]
    assert str(named["v5"]) == "-0.0"
    assert (named["v2"], named["v3"]) == (values[3], values[4])


def test_ints_decimals_and_times_are_merged_only_with_the_same_type_and_representation():
    now = timezone.now()
    values = [1, True, Int4(1), 1, Decimal("0"), Decimal("0.00"), Decimal("0"), now, now, uuid.UUID(int=1)]

    sql, named = distinct_parameters(", ".join(["%s"] * len(values)), values)

    assert sql == ", ".join(
        f"%({name})s" for name in (["v0", "v1", "v2", "v0", "v3", "v4", "v3", "v5", "v5", "v6"])
    )
    assert [type(value) for value in named.values()] == [
        int,
        bool,
        Int4,
        Decimal,
        Decimal,
        type(now),
        uuid.UUID,
    ]


def test_a_value_cast_to_a_type_is_merged_only_with_the_same_value_cast_to_the_same_type():
    # Bound on the server, one parameter has one type: a NULL cast to integer and the same NULL cast to
    # a timestamp are two parameters (a length or precision is the same type).
    statement = (
        "%s::integer, %s::timestamp with time zone, %s::integer, %s, %s::numeric(20, 10), %s::numeric(12, 6)"
    )
    values = [None, None, None, None, Decimal("0"), Decimal("0")]

    sql, named = distinct_parameters(statement, values)

    assert sql == (
        "%(v0)s::integer, %(v1)s::timestamp with time zone, %(v0)s::integer, %(v2)s, "
        "%(v3)s::numeric(20, 10), %(v3)s::numeric(12, 6)"
    )
    assert list(named.values()) == [None, None, None, Decimal("0")]


def test_a_statement_with_an_escaped_percent_keeps_its_placeholders_and_values():
    statement, values = "a = %s AND b LIKE 'x%%s'", ["x"]

    assert distinct_parameters(statement, values) == (statement, values)


def test_placeholders_and_parameters_must_match_in_number():
    with pytest.raises(ValueError):
        distinct_parameters("a = %s, b = %s", [1])
    with pytest.raises(ValueError):
        distinct_parameters("a = %s", [1, 2])


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_steps_record_passes_few_enough_values_for_psycopg_to_keep_its_parse(
    fake_provider, monkeypatch
):
    """A final answer's record (totals, completion, step row, message and calibration) has 72 values;
    psycopg keeps the parse of a statement of at most 50 (``PARSES_KEPT_UP_TO``)."""
    fake_provider.script(Reply(text="done", prompt_tokens=40, completion_tokens=2))
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    sent: list[tuple[str, object]] = []

    def recorded(execute, sql, params, many, context):
        sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(recorded):
        outcome = step_run(run_id=str(run.id), step_index=0, worker="w1")

    assert (outcome.action, outcome.reason) == ("finished", "completed")
    records = [(sql, params) for sql, params in sent if sql.startswith("WITH held AS")]
    assert len(records) == 1
    sql, params = records[0]
    assert isinstance(params, dict)
    assert sql.count("%(") == 72
    assert len(params) <= PARSES_KEPT_UP_TO
    assert len(sql.encode()) <= 4096
    assert RunMessage.objects.get(run=run, role="assistant").content == "done"


def test_a_text_seen_before_is_named_by_the_values_of_each_call():
    # The text's pieces are kept between calls; which values repeat is each call's own.
    statement = "a = %s, b = %s::integer, c = %s"

    first = distinct_parameters(statement, ["x", 1, "x"])
    second = distinct_parameters(statement, ["x", 1, "y"])

    assert first == ("a = %(v0)s, b = %(v1)s::integer, c = %(v0)s", {"v0": "x", "v1": 1})
    assert second == ("a = %(v0)s, b = %(v1)s::integer, c = %(v2)s", {"v0": "x", "v1": 1, "v2": "y"})
