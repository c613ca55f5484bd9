"""Editors see personal data before it is live (decision 0039): saving a snippet whose text holds
personal data under a class below ``personal_data`` is refused with what was found and where (kind and
line, never the value), unless the editor ticks the override, which is a governance event; at
``personal_data`` or stricter the save goes through with the findings shown."""

from __future__ import annotations

import pytest

from governance.guardrails.personal_data import PersonalDataKind
from governance.models import GovernanceEvent
from snippets.models import Snippet
from tests.editor_accounts import editor_make, snippet_admin_form
from tests.personal_data_corpus import labelled_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]

PHONE = next(item for item in labelled_corpus(seed=44, per_kind=1) if item.kind == PersonalDataKind.PHONE)
TEXT = f"Escalate politely.\n{PHONE.text}"
ADD = "/admin/snippets/snippet/add/"


@pytest.fixture
def editor(client):
    user = editor_make()
    client.force_login(user)
    return user


def new_snippet(data_class: str, ceiling: str) -> dict[str, str]:
    row = Snippet(identifier="escalation", name="Escalation", text=TEXT, data_class=data_class, ceiling=ceiling,
                  enforcement="enforce")  # fmt: skip
    return snippet_admin_form(row)


def test_a_class_below_personal_data_is_refused_with_what_was_found_and_where(client, editor):
    response = client.post(ADD, new_snippet("public_content", "external_global"))

    assert response.status_code == 200  # the form again, with the error
    page = response.content.decode()
    assert "Personal data found (phone in text, line 2)" in page
    assert Snippet.objects.count() == 0
    assert not GovernanceEvent.objects.filter(decision="personal_data_override").exists()


def test_an_override_keeps_the_class_and_is_recorded(client, editor):
    values = {**new_snippet("public_content", "external_global"), "personal_data_override": "on"}

    response = client.post(ADD, values, follow=True)

    assert response.status_code == 200
    assert Snippet.objects.get(identifier="escalation").data_class == "public_content"
    (event,) = GovernanceEvent.objects.filter(decision="personal_data_override")
    assert event.reason.startswith("snippet escalation kept public_content over 1 finding(s) by ")
    assert PHONE.value not in event.reason
    assert "the declared class was kept (recorded)" in response.content.decode()


def test_at_personal_data_the_save_goes_through_with_the_findings_shown(client, editor):
    response = client.post(ADD, new_snippet("personal_data", "external_eu"), follow=True)

    assert Snippet.objects.get(identifier="escalation").data_class == "personal_data"
    assert "Personal data found (phone in text, line 2)." in response.content.decode()
    assert not GovernanceEvent.objects.filter(decision="personal_data_override").exists()
