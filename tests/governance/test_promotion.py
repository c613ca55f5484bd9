"""One promotion to enforce for every classified row, and one admin action reporting it the same way."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry

from catalog.models import Configuration
from governance.actors import Actor
from governance.services import enforcement_promote
from governance.vocabulary import Enforcement
from skills.models import Skill
from snippets.models import Snippet
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, skill_make, snippet_make

pytestmark = pytest.mark.django_db


def test_one_service_promotes_snippets_skills_and_configuration_prompts(tmp_path, django_user_model):
    editor = Actor.of_user(django_user_model.objects.create_user("editor"))
    snippet = snippet_make(identifier="legacy", enforcement=Enforcement.OBSERVE)
    skill = skill_make(tmp_path, enforcement=Enforcement.OBSERVE)
    configuration = configuration_make(identifier="assistant", system_prompt_enforcement=Enforcement.OBSERVE)
    undeclared = configuration_make(
        identifier="bare",
        system_prompt_data_class="",
        system_prompt_ceiling="",
        system_prompt_enforcement=Enforcement.OBSERVE,
    )

    results = [
        enforcement_promote(rows=[snippet], actor=editor),
        enforcement_promote(rows=[skill, skill], actor=editor),
        enforcement_promote(rows=[configuration, undeclared], actor=editor),
    ]

    assert [(r.promoted, r.skipped) for r in results] == [
        (("legacy",), ()),
        ((skill.identifier,), ((skill.identifier, "already enforced"),)),
        (("assistant",), (("bare", "declare a data class and a ceiling first"),)),
    ]
    assert Snippet.objects.get(pk=snippet.pk).enforcement == Enforcement.ENFORCE
    assert Skill.objects.get(pk=skill.pk).enforcement == Enforcement.ENFORCE
    assert dict(Configuration.objects.values_list("identifier", "system_prompt_enforcement")) == {
        "assistant": "enforce",
        "bare": "observe",
    }
    for row in (snippet, skill):
        latest = type(row).history.filter(id=row.pk).latest("history_date")
        assert (latest.enforcement, latest.history_user.username, latest.history_change_reason) == (
            "enforce",
            "editor",
            "promoted to enforce",
        )


def test_a_process_promoting_is_named_in_the_history():
    snippet = snippet_make(identifier="legacy", enforcement=Enforcement.OBSERVE)

    enforcement_promote(rows=[snippet], actor=Actor.system("command:promote"))

    latest = snippet.history.latest("history_date")
    assert (latest.history_user, latest.history_change_reason) == (
        None,
        "promoted to enforce by command:promote",
    )


@pytest.mark.parametrize(
    ("changelist", "make"),
    [
        (
            "/admin/snippets/snippet/",
            lambda tmp: snippet_make(identifier="row", enforcement=Enforcement.OBSERVE),
        ),
        ("/admin/skills/skill/", lambda tmp: skill_make(tmp, enforcement=Enforcement.OBSERVE)),
        (
            "/admin/catalog/configuration/",
            lambda tmp: configuration_make(identifier="row", system_prompt_enforcement=Enforcement.OBSERVE),
        ),
    ],
)
def test_every_admin_promotes_with_the_same_messages_and_logs_the_row(
    admin_client, tmp_path, changelist, make
):
    row = make(tmp_path)

    response = admin_client.post(
        changelist, {"action": "promote_to_enforce", "_selected_action": [row.pk]}, follow=True
    )

    assert [str(m) for m in response.context["messages"]] == [f"Promoted: {row.identifier}."]
    assert list(LogEntry.objects.values_list("object_id", "change_message")) == [
        (str(row.pk), "Promoted to enforce.")
    ]


def test_an_editor_who_may_only_view_configurations_cannot_promote_them(client):
    configuration = configuration_make(identifier="legacy", system_prompt_enforcement=Enforcement.OBSERVE)
    client.force_login(editor_make())

    response = client.post(
        "/admin/catalog/configuration/",
        {"action": "promote_to_enforce", "_selected_action": [configuration.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert Configuration.objects.get(pk=configuration.pk).system_prompt_enforcement == Enforcement.OBSERVE
    assert LogEntry.objects.count() == 0
