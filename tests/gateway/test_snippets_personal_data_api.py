"""The snippets API asks for the personal-data override as the admin does (decision 0039): a write whose
text holds personal data under a class below ``personal_data`` is a 400 naming each finding's kind,
field and line (never the value) and stores nothing, unless it sets ``personal_data_override``, which
is recorded as a governance event naming the client; at ``personal_data`` or stricter it goes through
unasked. Values are generated at test time (tests/personal_data_corpus)."""

from __future__ import annotations

import json

import pytest

from governance.guardrails.personal_data import PersonalDataKind
from governance.models import GovernanceEvent
from snippets.models import Snippet
from tests.factories import snippet_make
from tests.gateway.conftest import assert_error
from tests.personal_data_corpus import labelled_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]

SNIPPETS = "/api/v1/snippets"
FOUND = {item.kind: item for item in labelled_corpus(seed=45, per_kind=1)}
PHONE, IBAN = FOUND[PersonalDataKind.PHONE], FOUND[PersonalDataKind.IBAN]
TEXT = f"Escalate politely.\n{PHONE.text}"
NEW = {
    "identifier": "escalation",
    "name": "Escalation",
    "text": TEXT,
    "data_class": "public_content",
    "ceiling": "external_global",
}


def overrides() -> list[GovernanceEvent]:
    return list(GovernanceEvent.objects.filter(decision="personal_data_override"))


def test_a_create_below_personal_data_is_400_naming_kind_and_place_and_stores_nothing(make_caller):
    response = make_caller("snippets:write").post(SNIPPETS, {**NEW, "description": IBAN.text})

    body = assert_error(response, 400, "personal_data_found")
    assert body["extra"] == {
        "findings": [
            {"kind": "iban", "field": "description", "line": 1},
            {"kind": "phone", "field": "text", "line": 2},
        ],
        "override_field": "personal_data_override",
    }
    assert "iban in description, line 1; phone in text, line 2" in body["message"]
    assert PHONE.value not in response.content.decode() and IBAN.value not in response.content.decode()
    assert not Snippet.objects.exists() and not Snippet.history.exists()
    assert overrides() == []


def test_an_override_keeps_the_class_and_is_recorded_naming_the_client(make_caller):
    caller = make_caller("snippets:write")

    response = caller.post(SNIPPETS, {**NEW, "personal_data_override": True})

    assert response.status_code == 201, response.content
    assert Snippet.objects.get(identifier="escalation").data_class == "public_content"
    (event,) = overrides()
    assert event.api_client == caller.client.name
    assert event.reason == (
        f"snippet escalation kept public_content over 1 finding(s) by api_client:{caller.client.name}"
    )
    assert PHONE.value not in json.dumps(list(GovernanceEvent.objects.values()), default=str)


def test_at_personal_data_a_create_is_not_asked(make_caller):
    response = make_caller("snippets:write").post(
        SNIPPETS, {**NEW, "data_class": "personal_data", "ceiling": "external_eu"}
    )

    assert response.status_code == 201, response.content
    assert Snippet.objects.get(identifier="escalation").data_class == "personal_data"
    assert overrides() == []


def test_an_override_without_personal_data_records_nothing(make_caller):
    response = make_caller("snippets:write").post(
        SNIPPETS, {**NEW, "text": "Escalate politely.", "personal_data_override": True}
    )

    assert response.status_code == 201, response.content
    assert overrides() == []


def test_a_patch_that_adds_personal_data_is_400_and_changes_nothing(make_caller):
    snippet_make(identifier="escalation", text="Escalate politely.")

    body = assert_error(
        make_caller("snippets:write").patch(f"{SNIPPETS}/escalation", {"text": TEXT}),
        400,
        "personal_data_found",
    )

    assert body["extra"]["findings"] == [{"kind": "phone", "field": "text", "line": 2}]
    assert Snippet.objects.get(identifier="escalation").text == "Escalate politely."
    assert Snippet.history.filter(identifier="escalation").count() == 1
    assert overrides() == []


def test_a_patch_with_the_override_is_stored_and_recorded(make_caller):
    snippet_make(identifier="escalation", text="Escalate politely.")
    caller = make_caller("snippets:write")

    response = caller.patch(f"{SNIPPETS}/escalation", {"text": TEXT, "personal_data_override": True})

    assert response.status_code == 200, response.content
    assert Snippet.objects.get(identifier="escalation").text == TEXT
    (event,) = overrides()
    assert event.api_client == caller.client.name


def test_raising_the_class_to_personal_data_needs_no_override(make_caller):
    snippet_make(identifier="escalation", text="Escalate politely.")

    response = make_caller("snippets:write").patch(
        f"{SNIPPETS}/escalation",
        {"text": TEXT, "data_class": "personal_data", "ceiling": "external_eu"},
    )

    assert response.status_code == 200, response.content
    assert Snippet.objects.get(identifier="escalation").data_class == "personal_data"
    assert overrides() == []
