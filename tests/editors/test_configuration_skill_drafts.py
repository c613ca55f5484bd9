"""A configuration's skills and tool settings are drafted like its prompt: an admin save proposes,
Publish applies, and sends (and runs, which plan the same way) see the live configuration only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agents.runtime.plan import send_plan
from agents.runtime.request import SendRequest
from catalog.models import Configuration
from governance.models import Draft, Publication
from governance.vocabulary import DataClass, SourceKind, TrustZone
from skills.models import Skill
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, configuration_skills_set, skill_make

pytestmark = pytest.mark.django_db


def form(configuration: Configuration, **changes: str) -> dict[str, str]:
    values = {
        "identifier": configuration.identifier, "name": configuration.name, "model": str(configuration.model_id),
        "is_active": "on", "snippet_tags": "[]", "system_prompt": configuration.system_prompt,
        "system_prompt_data_class": configuration.system_prompt_data_class,
        "system_prompt_ceiling": configuration.system_prompt_ceiling,
        "system_prompt_enforcement": configuration.system_prompt_enforcement,
        "max_iterations": "5", "context_usage_note": "off", "skill_mode": configuration.skill_mode,
        "context_strategy": "drop_oldest", "compaction_threshold": "0.8", "compaction_keep": "2",
        "skill_trust_floor": configuration.skill_trust_floor, "allowed_tool_groups": "[]", "allowed_tools": "[]",
        "skill_list": "\n".join(str(link.skill) for link in configuration.skill_links.order_by("position")),
        "fallback_links-TOTAL_FORMS": "0", "fallback_links-INITIAL_FORMS": "0",
        "fallback_links-MIN_NUM_FORMS": "0", "fallback_links-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    return {**values, **changes}


def live_plan(configuration: Configuration):
    fresh = Configuration.objects.select_related("model__provider").get(pk=configuration.pk)
    request = SendRequest(task_input="Hello.", input_data_class=DataClass.PUBLIC_CONTENT)
    return send_plan(configuration=fresh, request=request)


def sent_skills(configuration: Configuration) -> list[str]:
    """The names of the skills a send would carry, in order, read from its sources."""
    sent = [
        source.identifier for source in live_plan(configuration).sources if source.kind == SourceKind.SKILL
    ]
    by_identifier = {skill.identifier: skill.name for skill in Skill.objects.all()}
    return [by_identifier[identifier] for identifier in sent]


def offered_tools(configuration: Configuration) -> list[str]:
    return sorted(tool.name for tool in live_plan(configuration).offered_tools)


@pytest.fixture
def publisher(client) -> User:
    user = User.objects.create_superuser("publisher", password="p" * 12)
    client.force_login(user)
    return user


@pytest.fixture
def setting(tmp_path):
    style = skill_make(tmp_path, name="house-style")
    review = skill_make(tmp_path, name="review-checklist", description="Checks a draft before it goes out.")
    configuration = configuration_make(identifier="newsletter", zone=TrustZone.EXTERNAL_GLOBAL)
    configuration_skills_set(configuration, [style])
    return configuration, style, review


def url(configuration: Configuration, page: str = "change") -> str:
    return f"/admin/catalog/configuration/{configuration.pk}/{page}/"


def test_skills_and_tool_settings_are_saved_as_a_draft_and_published_together(client, publisher, setting):
    configuration, style, review = setting
    proposed = form(
        configuration, skill_list=f"{review}\n{style.identifier}", skill_mode="progressive",
        allowed_tool_groups='["content"]',
    )  # fmt: skip

    assert client.post(url(configuration), proposed).status_code == 302

    draft = Draft.objects.get()
    assert (draft.values["skill_list"], draft.values["skill_mode"]) == ([review.pk, style.pk], "progressive")
    assert draft.values["allowed_tool_groups"] == ["content"]
    live = Configuration.objects.get(pk=configuration.pk)
    assert (live.skill_mode, live.allowed_tool_groups) == ("full", [])
    assert sent_skills(configuration) == ["house-style"]
    assert offered_tools(configuration) == []
    page = client.get(url(configuration))
    assert page.context["adminform"].form["skill_list"].value() == f"{review}\n{style}"
    changes = {
        c.name: (c.live, c.draft) for c in client.get(url(configuration, "publish")).context["changes"]
    }
    assert changes["skill_list"] == ("house-style", "review-checklist, house-style")

    assert client.post(url(configuration, "publish")).status_code == 302

    live = Configuration.objects.get(pk=configuration.pk)
    assert (live.skill_mode, live.allowed_tool_groups) == ("progressive", ["content"])
    assert [link.skill_id for link in live.skill_links.order_by("position")] == [review.pk, style.pk]
    assert sent_skills(configuration) == ["review-checklist", "house-style"]
    assert offered_tools(configuration) == ["load_skill", "snippets_by_tag"]
    assert Publication.objects.get().fields == ["allowed_tool_groups", "skill_list", "skill_mode"]
    assert not Draft.objects.exists()


def test_an_unknown_or_repeated_skill_is_a_form_error_and_nothing_is_stored(client, publisher, setting):
    configuration, style, _ = setting

    response = client.post(
        url(configuration), form(configuration, skill_list=f"no-such-skill\n{style}\n{style}")
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["skill_list"]
    assert errors == [f"'no-such-skill': no such skill; {str(style)!r}: named twice"]
    assert not Draft.objects.exists()
    assert sent_skills(configuration) == ["house-style"]


def test_a_skill_is_named_by_its_name_when_only_one_skill_has_it(client, publisher, setting, tmp_path):
    configuration, _, review = setting
    skill_make(tmp_path, name="house-style")  # a second source with a skill of the same name

    ambiguous = client.post(url(configuration), form(configuration, skill_list="house-style"))
    assert ambiguous.context["adminform"].form.errors["skill_list"] == [
        "'house-style': several skills have this name"
    ]
    assert (
        client.post(url(configuration), form(configuration, skill_list="review-checklist")).status_code == 302
    )
    assert Draft.objects.get().values["skill_list"] == [review.pk]


def test_creating_a_configuration_with_skills_is_live(client, publisher, setting):
    configuration, style, review = setting
    values = form(configuration, identifier="digest", name="Digest", skill_list=f"{style}\n{review}")

    assert client.post("/admin/catalog/configuration/add/", values).status_code == 302

    created = Configuration.objects.get(identifier="digest")
    assert [link.skill_id for link in created.skill_links.order_by("position")] == [style.pk, review.pk]
    assert not Draft.objects.exists()


def test_the_preview_compares_a_drafted_skill_list(client, setting):
    configuration, style, review = setting
    editor = editor_make()
    publisher = User.objects.create_superuser("publisher", password="p" * 12)
    client.force_login(publisher)
    client.post(url(configuration), form(configuration, skill_list=f"{style}\n{review}"))
    Draft.objects.update(author=editor)
    client.force_login(editor)

    response = client.post(
        url(configuration, "preview"),
        {"task_input": "Hello.", "input_data_class": DataClass.PUBLIC_CONTENT, "compare": "on",
         "context-TOTAL_FORMS": "0", "context-INITIAL_FORMS": "0"},
    )  # fmt: skip

    comparison = response.context["comparison"]
    assert [s.name for s in comparison.drafted.preview.provenance.skills.included] == [
        "house-style",
        "review-checklist",
    ]
    assert [s.name for s in comparison.live.preview.provenance.skills.included] == ["house-style"]
    skills = {row.key: row for row in comparison.rows}["skills"]
    drafted, live = comparison.drafted.preview.fitted.breakdown, comparison.live.preview.fitted.breakdown
    assert (skills.live, skills.drafted) == (live.skills, drafted.skills)
    assert skills.delta > 0
    assert sent_skills(configuration) == ["house-style"]
