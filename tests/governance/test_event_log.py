"""The event log is append-only through the ORM, the admin and (on PostgreSQL) the database."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from governance.chain.writes import event_append
from governance.errors import AppendOnlyViolation
from governance.models import GovernanceEvent


def make_event(**fields) -> GovernanceEvent:
    values = {"correlation_id": "c1", "decision": "context_blocked", "outcome": "enforced"}
    values.update(fields)
    return event_append(GovernanceEvent(**values))


@pytest.mark.django_db
def test_saving_an_existing_event_is_refused():
    event = make_event()
    event.zone = "local"
    with pytest.raises(AppendOnlyViolation):
        event.save()
    assert GovernanceEvent.objects.get().zone == ""


@pytest.mark.django_db
def test_orm_update_and_delete_are_refused():
    event = make_event()
    with pytest.raises(AppendOnlyViolation):
        GovernanceEvent.objects.filter(pk=event.pk).update(zone="local")
    with pytest.raises(AppendOnlyViolation):
        GovernanceEvent.objects.all().delete()
    with pytest.raises(AppendOnlyViolation):
        event.delete()
    with pytest.raises(AppendOnlyViolation):
        GovernanceEvent.objects.bulk_update([event], ["zone"])
    assert GovernanceEvent.objects.filter(zone="").count() == 1


@pytest.mark.django_db
def test_admin_is_read_only(admin_client):
    event = make_event(source_identifier="brand")
    assert admin_client.get("/admin/governance/governanceevent/").status_code == 200
    assert admin_client.get("/admin/governance/governanceevent/add/").status_code == 403
    response = admin_client.post(f"/admin/governance/governanceevent/{event.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    page = admin_client.get(f"/admin/governance/governanceevent/{event.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert GovernanceEvent.objects.count() == 1


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_postgres_trigger_rejects_sql_update_and_delete():
    event = make_event()
    table = GovernanceEvent._meta.db_table
    for statement in (
        f"UPDATE {table} SET zone = 'local' WHERE id = %s",
        f"DELETE FROM {table} WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [event.pk])
    assert GovernanceEvent.objects.filter(pk=event.pk, zone="").exists()
