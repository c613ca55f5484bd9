"""A run pins the content versions it starts with: every step builds its context from them and records
them; an editor's change mid-run reaches the next run, not the next step. Classification, switches
and targets are never pinned: a stricter class or an inactive model applies at the very next step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.builtin_tools import LOAD_SKILL_MAX_BYTES
from agents.models import AgentRun, AgentStep, RunMessage
from agents.runtime.pins import Pin
from agents.runtime.step import step_run
from agents.services import run_create
from catalog.models import Configuration, LlmModel
from catalog.services import configuration_save
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.composition import END_MARKER, skill_block
from skills.models import Skill
from skills.services import skill_classify, skill_disable, skill_enable, skill_source_sync
from snippets.models import Snippet
from snippets.services import snippet_update
from tests.agents.runs import fake_configuration
from tests.factories import TEST_ACTOR, configuration_skills_set, skill_make, snippet_make
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = pytest.mark.django_db

TOOL_TURN = Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]}))


def pinned_configuration(fake: FakeProvider, **fields) -> Configuration:
    configuration = fake_configuration(
        fake, zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"], system_prompt="Be brief.", **fields
    )
    snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    return configuration


def start(configuration: Configuration, capture) -> AgentRun:
    """A run whose first step has run (and asked for a tool), the second not yet."""
    with capture(execute=False):
        run = run_create(configuration=configuration, input_text="Go.", input_data_class="public_content")
    with capture(execute=False):
        assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "advanced"
    return run


def system_text(body: dict) -> str:
    return body["messages"][0]["content"]


def history_id(model, pk: int) -> int:
    return model.history.filter(id=pk).latest("history_id").history_id


def test_an_editors_change_mid_run_does_not_change_the_next_steps_prompt(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = pinned_configuration(fake_provider)
    fake_provider.script(TOOL_TURN, Reply(text="Done."), Reply(text="Next run."))
    run = start(configuration, django_capture_on_commit_callbacks)
    snippet = Snippet.objects.get(identifier="tone")
    started_with = history_id(Snippet, snippet.pk)

    snippet_update(snippet=snippet, actor=TEST_ACTOR, text="Write coldly.")
    configuration.system_prompt = "Be verbose."
    configuration_save(configuration=configuration, actor=TEST_ACTOR)
    snippet_make(tags=("tone",), identifier="tone-extra", text="Added mid-run.")
    assert step_run(run_id=str(run.id), step_index=1, worker="w1").reason == "completed"

    first, second = (system_text(body) for body in fake_provider.bodies()[:2])
    assert first == second
    assert "Write warmly." in second and "Be brief." in second
    assert "Write coldly." not in second and "Added mid-run." not in second and "Be verbose." not in second
    run.refresh_from_db()
    steps = list(AgentStep.objects.filter(run=run).order_by("index"))
    assert [step.pins for step in steps] == [run.pins, run.pins]
    assert run.pins == [
        {
            "kind": "configuration",
            "identifier": configuration.identifier,
            "id": configuration.pk,
            "history_id": run.pins[0]["history_id"],
        },
        {"kind": "snippet", "identifier": "tone", "id": snippet.pk, "history_id": started_with},
    ]
    assert history_id(Snippet, snippet.pk) != started_with  # the edit made a new version
    assert history_id(Configuration, configuration.pk) != run.pins[0]["history_id"]

    # The next run starts from the edited content.
    with django_capture_on_commit_callbacks(execute=True):
        run_create(configuration=configuration, input_text="Again.", input_data_class="public_content")
    newest = system_text(fake_provider.bodies()[2])
    assert "Write coldly." in newest and "Added mid-run." in newest and "Be verbose." in newest


def test_a_skill_changed_mid_run_is_sent_as_pinned(
    fake_provider, django_capture_on_commit_callbacks, tmp_path
):
    configuration = pinned_configuration(fake_provider)
    skill = skill_make(tmp_path, body="# Steps\n\nPinned body.\n")
    configuration_skills_set(configuration, [skill])
    fake_provider.script(TOOL_TURN, Reply(text="Done."))
    run = start(configuration, django_capture_on_commit_callbacks)
    pinned = history_id(Skill, skill.pk)

    # A write that bypasses history: the live row no longer holds the pinned version.
    Skill.objects.filter(pk=skill.pk).update(body="# Steps\n\nLive body.\n")
    step_run(run_id=str(run.id), step_index=1, worker="w1")

    second = str(fake_provider.bodies()[1]["messages"][1]["content"])
    assert "Pinned body." in second and "Live body." not in second
    assert AgentStep.objects.get(run=run, index=1).pins[-1] == {
        "kind": "skill",
        "identifier": skill.identifier,
        "id": skill.pk,
        "history_id": pinned,
    }


def test_a_run_pins_the_live_content_even_when_a_bulk_write_skipped_history(fake_provider):
    configuration = pinned_configuration(fake_provider)
    Snippet.objects.filter(identifier="tone").update(text="Written by a bulk update.")

    run = run_create(configuration=configuration, input_text="Go.", input_data_class="public_content")

    pin = run.pins[1]
    record = Snippet.history.get(history_id=pin["history_id"])
    assert record.text == "Written by a bulk update."


def test_a_stricter_class_on_a_pinned_snippet_applies_at_the_next_step(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = pinned_configuration(fake_provider)
    fake_provider.script(TOOL_TURN, Reply(text="never"))
    run = start(configuration, django_capture_on_commit_callbacks)

    snippet_update(
        snippet=Snippet.objects.get(identifier="tone"),
        actor=TEST_ACTOR,
        data_class=DataClass.SECRET_ADJACENT,
        ceiling=TrustZone.LOCAL,
    )
    outcome = step_run(run_id=str(run.id), step_index=1, worker="w1")

    assert outcome.reason == "policy_denied"
    assert len(fake_provider.requests) == 1
    event = GovernanceEvent.objects.get(decision="context_blocked")
    assert (event.source_kind, event.source_identifier) == ("snippet", "tone")


def test_a_snippet_switched_off_mid_run_is_left_out_at_the_next_step(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = pinned_configuration(fake_provider)
    fake_provider.script(TOOL_TURN, Reply(text="Done."))
    run = start(configuration, django_capture_on_commit_callbacks)

    snippet_update(snippet=Snippet.objects.get(identifier="tone"), actor=TEST_ACTOR, is_active=False)
    step_run(run_id=str(run.id), step_index=1, worker="w1")

    assert "Write warmly." not in system_text(fake_provider.bodies()[1])
    assert [pin["kind"] for pin in AgentStep.objects.get(run=run, index=1).pins] == ["configuration"]


def test_an_inactive_model_applies_at_the_next_step(fake_provider, django_capture_on_commit_callbacks):
    configuration = pinned_configuration(fake_provider)
    fake_provider.script(TOOL_TURN, Reply(text="never"))
    run = start(configuration, django_capture_on_commit_callbacks)

    LlmModel.objects.filter(pk=configuration.model_id).update(is_active=False)
    step_run(run_id=str(run.id), step_index=1, worker="w1")

    run.refresh_from_db()
    assert (run.status, run.error_code) == ("failed", "model_inactive")
    assert len(fake_provider.requests) == 1


def test_a_step_whose_pins_the_worker_holds_reads_no_history(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = pinned_configuration(fake_provider)
    fake_provider.script(TOOL_TURN, Reply(text="Done."))
    run = start(configuration, django_capture_on_commit_callbacks)

    with CaptureQueriesContext(connection) as queries:
        step_run(run_id=str(run.id), step_index=1, worker="w1")

    history_tables = (Snippet.history.model._meta.db_table, Configuration.history.model._meta.db_table)
    read = [q["sql"] for q in queries.captured_queries if any(t in q["sql"] for t in history_tables)]
    assert read == []
    assert AgentStep.objects.get(run=run, index=1).pins == run.pins


# --- load_skill (progressive mode) loads the pinned version ------------------------------------------------

LOAD = Reply.tools(("c1", "load_skill", {"name": "house-style"}))
LOAD_AGAIN = Reply.tools(("c2", "load_skill", {"name": "house-style"}))


def progressive_run(fake: FakeProvider, tmp_path, capture, **skill_fields) -> tuple[AgentRun, Skill]:
    """A progressive run of one skill whose first step has loaded it, the second step not yet run."""
    skill_fields.setdefault("data_class", DataClass.EDITOR_CONTENT)
    skill = skill_make(tmp_path, name="house-style", body="# Steps\n\nPinned body.\n", **skill_fields)
    configuration = fake_configuration(
        fake, zone=TrustZone.EXTERNAL_GLOBAL, skill_mode="progressive", allowed_tool_groups=[]
    )
    configuration_skills_set(configuration, [skill])
    return start(configuration, capture), skill


def skill_file_publish(skill: Skill, body: str) -> Skill:
    """An editor's new version of the skill's SKILL.md: synced from its source (which disables a changed
    skill until it is reviewed), then enabled again."""
    path = Path(skill.source.path) / skill.name / "SKILL.md"
    path.write_text(f"---\nname: {skill.name}\ndescription: {skill.description}\n---\n{body}")
    skill_source_sync(source_id=skill.source_id)
    return skill_enable(skill=Skill.objects.get(pk=skill.pk), actor=TEST_ACTOR)


def loaded(run: AgentRun, call_id: str) -> RunMessage:
    return RunMessage.objects.get(run=run, role="tool", tool_call_id=call_id)


def test_load_skill_returns_the_pinned_body_after_an_editor_published_a_new_one(
    fake_provider, django_capture_on_commit_callbacks, tmp_path
):
    fake_provider.script(LOAD, LOAD_AGAIN, Reply(text="Done."))
    run, skill = progressive_run(fake_provider, tmp_path, django_capture_on_commit_callbacks)
    pinned = history_id(Skill, skill.pk)
    pinned_text = skill_block([skill], max_bytes=LOAD_SKILL_MAX_BYTES).text
    assert loaded(run, "c1").content == pinned_text

    published = skill_file_publish(skill, "# Steps\n\nPublished body.\n")
    assert (published.body, published.is_enabled) == ("# Steps\n\nPublished body.\n", True)
    assert history_id(Skill, skill.pk) != pinned
    with django_capture_on_commit_callbacks(execute=False):
        assert step_run(run_id=str(run.id), step_index=1, worker="w1").action == "advanced"

    second = loaded(run, "c2")
    assert second.content == pinned_text
    assert second.content.endswith(f"# Steps\n\nPinned body.\n{END_MARKER}")
    assert "Published body." not in second.content
    assert second.data_class == "editor_content"
    assert AgentStep.objects.get(run=run, index=1).pins[-1] == {
        "kind": "skill",
        "identifier": skill.identifier,
        "id": skill.pk,
        "history_id": pinned,
    }
    assert "Published body." not in fake_provider.wire_text()


def test_load_skill_refuses_a_pinned_skill_made_stricter_mid_run(
    fake_provider, django_capture_on_commit_callbacks, tmp_path
):
    # Observed rows are still listed in the prompt; a loaded skill is always checked as enforced.
    fake_provider.script(LOAD, LOAD_AGAIN, Reply(text="Done."))
    run, skill = progressive_run(
        fake_provider,
        tmp_path,
        django_capture_on_commit_callbacks,
        data_class=DataClass.PUBLIC_CONTENT,
        enforcement=Enforcement.OBSERVE,
    )
    assert "Pinned body." in loaded(run, "c1").content

    skill_classify(
        skill=skill,
        data_class=DataClass.SECRET_ADJACENT,
        ceiling=TrustZone.LOCAL,
        enforcement=Enforcement.OBSERVE,
        actor=TEST_ACTOR,
    )
    with django_capture_on_commit_callbacks(execute=False):
        step_run(run_id=str(run.id), step_index=1, worker="w1")

    assert loaded(run, "c2").content == "Error: skill 'house-style' may not be loaded in this trust zone."


def test_load_skill_refuses_a_pinned_skill_disabled_mid_run(
    fake_provider, django_capture_on_commit_callbacks, tmp_path
):
    fake_provider.script(LOAD, LOAD_AGAIN, Reply(text="Done."))
    run, skill = progressive_run(fake_provider, tmp_path, django_capture_on_commit_callbacks)

    skill_disable(skill=skill, actor=TEST_ACTOR)
    with django_capture_on_commit_callbacks(execute=False):
        step_run(run_id=str(run.id), step_index=1, worker="w1")

    assert loaded(run, "c2").content == "Error: no skill named 'house-style' is available to this run."
    assert "house-style" not in str(fake_provider.bodies()[1]["messages"][1]["content"])
    assert [pin["kind"] for pin in AgentStep.objects.get(run=run, index=1).pins] == ["configuration"]


def test_a_pin_as_a_dict_is_its_four_fields_in_a_new_dict_read_back_as_the_same_pin():
    pin = Pin(kind="snippet", identifier="tone", id=3, history_id=41)
    stored = pin.as_dict()
    assert (
        stored
        == dataclasses.asdict(pin)
        == {"kind": "snippet", "identifier": "tone", "id": 3, "history_id": 41}
    )
    assert Pin.of(stored) == pin
    stored["id"] = 0  # each call hands out its own dict
    assert pin.as_dict()["id"] == 3
