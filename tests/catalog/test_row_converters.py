"""Rows a statement of SQL text returns are converted as the ORM converts them, with the converters
looked up once per connection and fields read (``catalog/models/sql.py``)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection as default_connection
from django.db import connections

from agents.models import RunMessage
from agents.services import run_create
from catalog.models.sql import Table, _row_converters, converted_rows
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration

pytestmark = pytest.mark.django_db

ROW = ("position", "role", "tool_calls", "tool_call_id")


def stored_rows(connection, run) -> list[tuple[object, ...]]:
    table = Table(RunMessage, connection)
    sql = f"SELECT {', '.join(table[name] for name in ROW)} FROM {table.name} WHERE {table['run']} = %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [table.value("run", run.pk)])
        return cursor.fetchall()


def test_rows_are_converted_as_the_orm_converts_them_with_the_converters_looked_up_once(fake_provider):
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
    )
    calls = [{"id": "c1", "name": "snippets_by_tag", "arguments": "{}"}]
    RunMessage.objects.create(run=run, position=0, step_index=0, role="assistant", tool_calls=calls)
    connection = connections["default"]
    fields = [Table(RunMessage, connection).field(name) for name in ROW]
    expected = [list(RunMessage.objects.filter(run=run).values_list(*ROW).get())]
    before = _row_converters.cache_info()

    for each in (connection, default_connection, connection):  # the proxy stands for the same connection
        assert list(converted_rows(each, "default", fields, stored_rows(connection, run))) == expected

    after = _row_converters.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)


def test_each_threads_connection_has_converters_of_its_own():
    fields = (Table(RunMessage, connections["default"]).field("tool_calls"),)
    compilers = []

    def look_up() -> None:
        compilers.append(_row_converters(connections["default"], "default", fields)[0])
        connections["default"].close()

    thread = threading.Thread(target=look_up)
    thread.start()
    thread.join()
    look_up_here = _row_converters(connections["default"], "default", fields)[0]

    assert compilers[0].connection is not look_up_here.connection
    assert look_up_here.connection is connections["default"]
