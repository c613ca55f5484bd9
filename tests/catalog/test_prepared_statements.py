"""The step's statements are prepared on the server (catalog/models/sql.py, ``statement_cursor``)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import AgentRun
from catalog.models.sql import Table, insert_parts, statement_cursor, typed_placeholder

pytestmark = pytest.mark.services

PREPARED = "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s"


def prepared_count(marker: str) -> int:
    with connection.cursor() as cursor:  # the view lists this session's prepared statements only
        cursor.execute(PREPARED, [f"%{marker}%"])
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_a_statement_run_again_after_the_threshold_is_prepared_once_and_logged_each_time():
    threshold = connection.settings_dict["OPTIONS"]["prepare_threshold"]
    assert threshold == 1  # config/settings/storage.py, DATABASE_PREPARED_STATEMENTS on by default
    table = Table(AgentRun, connection)
    sql = f"SELECT count(*) FROM {table.name} WHERE {table['status']} = %s /* prepared-marker */"

    def run() -> int:
        with statement_cursor(connection) as cursor:
            cursor.execute(sql, ["running"])
            return int(cursor.fetchone()[0])

    # One connection throughout (a pooled one goes back when closed).
    with connection.cursor(), CaptureQueriesContext(connection) as logged:
        counts = [run() for _ in range(threshold)]
        assert prepared_count("prepared-marker") == 0
        counts += [run(), run()]
        assert prepared_count("prepared-marker") == 1
    assert counts == [0] * (threshold + 2)
    # Logged by its text each time, prepared or not (config/db/postgresql/base.py).
    texts = [q["sql"] for q in logged.captured_queries if table.name in q["sql"]]
    assert texts[:threshold] == [texts[0]] * threshold
    assert texts[0].endswith("= $1 /* prepared-marker */")
    assert texts[threshold:] == [sql] * 2


@pytest.mark.django_db(transaction=True)
def test_without_a_threshold_the_statement_runs_as_the_orms_do_and_is_never_prepared(monkeypatch):
    monkeypatch.delitem(connection.settings_dict["OPTIONS"], "prepare_threshold")  # as with the setting off
    table = Table(AgentRun, connection)
    sql = f"SELECT count(*) FROM {table.name} WHERE {table['status']} = %s /* client-marker */"
    with connection.cursor() as orm_cursor:
        for _ in range(8):
            with statement_cursor(connection) as cursor:
                cursor.execute(sql, ["running"])
                assert type(cursor.cursor) is type(orm_cursor.cursor)  # bound on the client
        assert prepared_count("client-marker") == 0


@pytest.mark.django_db
def test_an_insert_select_casts_each_value_the_server_would_read_as_text_to_its_columns_type():
    run = AgentRun(id="00000000-0000-0000-0000-000000000001")
    parts = insert_parts(run, connection)
    assert parts is not None
    columns, values = parts
    assert len(columns.columns) == len(values) == len(columns.placeholders) == len(columns.fields)
    by_column = dict(zip(columns.columns, columns.placeholders, strict=True))
    assert by_column['"id"'] == "%s::uuid"
    assert by_column['"status"'] == "%s"  # text: assigned to a character column as it is
    assert by_column['"created_at"'] == "%s::timestamp with time zone"
    assert typed_placeholder(AgentRun._meta.get_field("input_text"), connection) == "%s"
