"""A statement a step runs every time with the same shape is built once (catalog/models/sql.py,
``statement_text``), and only its values change."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from agents.models import AgentRun
from agents.models.runs import TERMINAL_STATUSES
from agents.runtime.leases import HeldLease, held_update_sql
from catalog.models.sql import statement_text

pytestmark = pytest.mark.django_db


def test_a_text_is_built_once_per_key_and_each_key_has_its_own():
    built: list[str] = []

    def build(text: str):
        return lambda: built.append(text) or text

    first = statement_text(connection, ("probe", 1), build("SELECT 1"))
    again = statement_text(connection, ("probe", 1), build("never built"))
    other = statement_text(connection, ("probe", 2), build("SELECT 2"))

    assert (first, again, other) == ("SELECT 1", "SELECT 1", "SELECT 2")
    assert built == ["SELECT 1", "SELECT 2"]


def test_a_lease_update_of_the_same_shape_reuses_its_text_with_each_calls_values():
    run_id = str(uuid.uuid4())
    one = held_update_sql(HeldLease(run_id, 1, "w1"), {"lease_owner": "a"}, connection)
    two = held_update_sql(HeldLease(run_id, 2, "w2"), {"lease_owner": "b"}, connection)
    finished = held_update_sql(HeldLease(run_id, 2, "w2"), {"lease_owner": "b"}, connection, unfinished=False)

    assert one[0] is two[0]
    statuses = [status.value for status in TERMINAL_STATUSES]
    assert one[1] == ["a", uuid.UUID(run_id).hex, "w1", 1, *statuses]
    assert two[1] == ["b", uuid.UUID(run_id).hex, "w2", 2, *statuses]
    # Another shape, another text: without the unfinished condition and its parameters.
    assert "NOT IN" in one[0] and "NOT IN" not in finished[0]
    assert finished[1] == ["b", uuid.UUID(run_id).hex, "w2", 2]
    assert AgentRun.objects.count() == 0  # built, never run
