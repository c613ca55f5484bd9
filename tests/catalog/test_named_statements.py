"""Statements of SQL text on SQLite pass their values by name (catalog/models/sql.py ``executed``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from catalog.models.sql import executed

pytestmark = pytest.mark.django_db


class Sent:
    """What reached the backend's cursor: each statement's text and parameters."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any]] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the named values are SQLite's")
def test_a_statement_runs_with_its_values_named_in_order_and_a_doubled_percent_stays_a_percent():
    sent = Sent()
    with connection.execute_wrapper(sent), connection.cursor() as cursor:
        row = executed(cursor, "SELECT %s, '100%%', %s || 'b'", [7, "a"]).fetchone()

    assert row == (7, "100%", "ab")
    assert sent.statements == [("SELECT %(p0)s, '100%%', %(p1)s || 'b'", {"p0": 7, "p1": "a"})]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the named values are SQLite's")
def test_values_that_do_not_match_the_placeholders_are_refused_before_anything_runs():
    sent = Sent()
    with connection.execute_wrapper(sent), connection.cursor() as cursor, pytest.raises(ValueError):
        executed(cursor, "SELECT %s, %s", [1])

    assert sent.statements == []
