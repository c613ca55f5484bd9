"""A step's claim: ``AgentRun.objects.claim`` takes the lease and reads what the step needs, in one
statement, with every name taken from model metadata."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import AgentRun, AgentStep, RunClaim, RunMessage
from agents.models.runs import _claim_statement
from agents.selectors import run_client_name
from agents.services import run_create
from catalog.models import CatalogVersion, LlmModel
from catalog.services import api_client_create
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.product import PRODUCT_PACKAGES

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PRODUCT_APPS = PRODUCT_PACKAGES
LEASE = timedelta(seconds=300)
DECLARATION = re.compile(r"\s*(db_table = |history = HistoricalRecords\(table_name=)")


def claim(run: AgentRun, *, worker: str = "w1", step_index: int = 0) -> RunClaim | None:
    now = timezone.now()
    return AgentRun.objects.claim(
        run_id=str(run.id), step_index=step_index, worker=worker, now=now, expires_at=now + LEASE
    )


def new_run(fake_provider, **fields) -> AgentRun:
    run = run_create(
        configuration=fake_configuration(fake_provider),
        input_text="Go.",
        input_data_class=DataClass.PUBLIC_CONTENT,
        **fields,
    )
    return run


def test_a_claim_returns_the_row_as_the_orm_reads_it_with_what_the_step_needs(fake_provider):
    client = api_client_create(name="shop", scopes=["runs:create"]).client
    run = new_run(fake_provider, api_client=client)
    AgentRun.objects.filter(id=run.id).update(caller_context=[{"name": "brief", "text": "Monday."}])
    AgentStep.objects.create(run=run, index=0, status="refused", usage_provenance="unavailable")
    LlmModel.objects.filter(pk=run.configuration.model_id).update(
        calibration_factor=1.25, calibration_samples=7
    )

    claimed = claim(run)

    assert claimed is not None
    stored = AgentRun.objects.get(id=run.id)
    fields = [field.attname for field in AgentRun._meta.concrete_fields]
    assert [getattr(claimed.run, name) for name in fields] == [getattr(stored, name) for name in fields]
    assert (stored.status, stored.lease_owner) == ("running", "w1")
    assert claimed.run.caller_context == [{"name": "brief", "text": "Monday."}]
    assert (
        claimed.catalog_token,
        claimed.model_calibration_factor,
        claimed.model_calibration_samples,
        claimed.step_status,
    ) == (CatalogVersion.objects.get(id=1).token, 1.25, 7, "refused")
    with CaptureQueriesContext(connection) as queries:
        assert run_client_name(claimed.run) == "shop"
    assert queries.captured_queries == []


def test_a_claim_without_a_client_a_step_or_a_token_row_reads_none_of_them(fake_provider):
    run = new_run(fake_provider)
    CatalogVersion.objects.all().delete()
    claimed = claim(run)
    assert claimed is not None
    assert (claimed.catalog_token, claimed.step_status, claimed.run.api_client) == (None, None, None)
    assert claimed.messages == 0


def test_the_claims_statement_is_built_once_and_reads_the_step_at_each_claims_own_index(fake_provider):
    first, second = new_run(fake_provider), new_run(fake_provider)
    AgentRun.objects.filter(id=second.id).update(next_step_index=3)
    AgentStep.objects.create(run=first, index=0, status="refused", usage_provenance="unavailable")
    AgentStep.objects.create(run=second, index=3, status="failed", usage_provenance="unavailable")

    with CaptureQueriesContext(connection) as statements:
        claims = [claim(first), claim(second, step_index=3)]

    assert [c.step_status if c else None for c in claims] == ["refused", "failed"]
    assert len(statements.captured_queries) == 2  # one statement each, as before
    assert _claim_statement(connection) is _claim_statement(connection)


def test_a_claim_counts_the_runs_stored_messages_by_its_last_position(fake_provider):
    run = new_run(fake_provider)
    other = new_run(fake_provider)
    for position, role in enumerate(("assistant", "tool", "tool")):
        RunMessage.objects.create(run=run, position=position, step_index=0, role=role, content="x")
    RunMessage.objects.create(run=other, position=0, step_index=0, role="assistant", content="y")

    claimed = claim(run)

    assert claimed is not None
    assert claimed.messages == 3


@pytest.mark.parametrize(
    ("state", "step_index"),
    [
        ({}, 1),  # the run is at another step
        ({"status": "completed"}, 0),
        ({"status": "cancelled"}, 0),
        ({"lease_owner": "w2", "lease_expires_at": timezone.now() + LEASE}, 0),  # a live lease
    ],
)
def test_nothing_is_claimed_or_written_when_the_step_is_not_free(fake_provider, state, step_index):
    run = new_run(fake_provider)
    AgentRun.objects.filter(id=run.id).update(**state)
    before = AgentRun.objects.values().get(id=run.id)
    assert claim(run, step_index=step_index) is None
    assert AgentRun.objects.values().get(id=run.id) == before


@pytest.mark.parametrize("owner", ["w1", "dead"])
def test_an_expired_lease_or_the_workers_own_is_taken(fake_provider, owner):
    run = new_run(fake_provider)
    expires = timezone.now() + (LEASE if owner == "w1" else -LEASE)
    AgentRun.objects.filter(id=run.id).update(lease_owner=owner, lease_expires_at=expires)
    claimed = claim(run)
    assert claimed is not None
    assert (claimed.run.lease_owner, claimed.run.status) == ("w1", "running")
    assert claimed.run.lease_expires_at > timezone.now() + LEASE - timedelta(seconds=30)


def test_no_product_module_writes_a_table_name_by_hand():
    """Statements take table names from ``Model._meta`` (``catalog.models.sql.Table``), so a renamed
    table or column cannot leave a hand-written statement behind. Migrations are history, and a
    model's own declaration of its table (``db_table``, a history table's ``table_name``) is where
    ``_meta`` reads it from: both exempt."""
    tables = sorted({model._meta.db_table for model in apps.get_models()}, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, tables)) + r")\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for app in PRODUCT_APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if pattern.search(line) and not DECLARATION.match(line)
    ]
    assert found == []
