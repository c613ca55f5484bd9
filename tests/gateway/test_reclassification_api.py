"""Declassifying a snippet through the API needs governance:classify; every classification change is an event."""

from __future__ import annotations

import pytest

from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Enforcement, TrustZone
from snippets.models import Snippet
from tests.factories import snippet_make
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

SNIPPETS = "/api/v1/snippets"
# The reproduction: a secret snippet lowered to public and opened to every external zone.
DECLASSIFY = {"data_class": "public_content", "ceiling": "external_global"}


@pytest.fixture
def secret():
    return snippet_make(
        identifier="db-runbook",
        text="The on-call database runbook.",
        data_class=DataClass.SECRET_ADJACENT,
        ceiling=TrustZone.LOCAL,
    )


def _state(identifier: str) -> tuple[tuple[str, str, str], list[tuple[str, str, str]]]:
    snippet = Snippet.objects.get(identifier=identifier)
    versions = list(
        Snippet.history.filter(id=snippet.pk)
        .order_by("history_id")
        .values_list("data_class", "ceiling", "history_change_reason")
    )
    return (snippet.data_class, snippet.ceiling, snippet.enforcement), versions


def test_a_write_client_cannot_lower_a_class_or_loosen_a_ceiling(make_caller, secret):
    before = _state("db-runbook")

    body = assert_error(
        make_caller("snippets:write").patch(f"{SNIPPETS}/db-runbook", DECLASSIFY), 403, "reclassify_forbidden"
    )

    assert body["extra"] == {"fields": ["data_class", "ceiling"], "required_scope": "governance:classify"}
    assert _state("db-runbook") == before
    assert GovernanceEvent.objects.count() == 0


def test_with_the_classify_scope_the_change_is_applied_and_recorded(make_caller, secret):
    caller = make_caller("snippets:write", "governance:classify")

    response = caller.patch(f"{SNIPPETS}/db-runbook", DECLASSIFY)

    assert response.status_code == 200, response.content
    assert (response.json()["data_class"], response.json()["ceiling"]) == (
        "public_content",
        "external_global",
    )
    event = GovernanceEvent.objects.get()
    assert (
        event.decision,
        event.outcome,
        event.source_kind,
        event.source_identifier,
        event.data_class,
        event.ceiling,
        event.api_client,
        event.configuration,
        event.reason,
    ) == (
        "reclassified",
        "enforced",
        "snippet",
        "db-runbook",
        "public_content",
        "external_global",
        caller.client.name,
        "",
        "secret_adjacent/local/enforce -> public_content/external_global/enforce"
        f" by api_client:{caller.client.name}",
    )
    latest = Snippet.history.filter(id=secret.pk).latest("history_id")
    assert latest.history_change_reason == f"updated by api_client:{caller.client.name}"


def test_relaxing_to_observe_needs_the_classify_scope(make_caller):
    snippet_make(identifier="tone")
    before = _state("tone")

    body = assert_error(
        make_caller("snippets:write").patch(f"{SNIPPETS}/tone", {"enforcement": "observe"}),
        403,
        "reclassify_forbidden",
    )
    assert body["extra"]["fields"] == ["enforcement"]
    assert _state("tone") == before
    assert GovernanceEvent.objects.count() == 0

    response = make_caller("snippets:write", "governance:classify").patch(
        f"{SNIPPETS}/tone", {"enforcement": "observe"}
    )
    assert response.status_code == 200, response.content
    assert Snippet.objects.get(identifier="tone").enforcement == Enforcement.OBSERVE
    assert GovernanceEvent.objects.get().reason.startswith(
        "public_content/external_global/enforce -> public_content/external_global/observe by api_client:"
    )


def test_a_stricter_classification_needs_no_privilege_and_is_recorded(make_caller):
    snippet_make(identifier="tone")
    caller = make_caller("snippets:write")
    unchanged = caller.patch(f"{SNIPPETS}/tone", {"text": "Warmer.", "data_class": "public_content"})
    assert (unchanged.status_code, GovernanceEvent.objects.count()) == (200, 0)

    response = caller.patch(f"{SNIPPETS}/tone", {"data_class": "source_code", "ceiling": "external_eu"})

    assert response.status_code == 200, response.content
    event = GovernanceEvent.objects.get()
    assert (event.decision, event.api_client, event.reason) == (
        "reclassified",
        caller.client.name,
        "public_content/external_global/enforce -> source_code/external_eu/enforce"
        f" by api_client:{caller.client.name}",
    )
