"""Skills on the wire: fenced in the first user message, never in the system role; progressive loading."""

from __future__ import annotations

import pytest

from agents.models import RunMessage
from governance.vocabulary import DataClass, TrustZone
from skills.composition import BEGIN_MARKER, END_MARKER, GUARD_PREAMBLE
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import configuration_skills_set, skill_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


def test_skill_block_goes_to_the_first_user_message_fenced(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    skill = skill_make(tmp_path, name="house-style", body="Write plainly.\n")
    configuration = fake_configuration(fake_provider, system_prompt="You help editors.")
    configuration_skills_set(configuration, [skill])
    fake_provider.script(Reply(text="ok"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text="Draft it.")
    assert run.status == "completed"
    system, user = fake_provider.bodies()[0]["messages"]
    assert "Write plainly." not in system["content"]
    assert user["content"].index(BEGIN_MARKER) < user["content"].index("Write plainly.")
    assert user["content"].index("Write plainly.") < user["content"].index(END_MARKER)
    assert user["content"].endswith("Draft it.")


def test_request_skills_follow_the_configurations(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    own = skill_make(tmp_path, name="house-style", body="First body.\n")
    extra = skill_make(tmp_path, name="legal-check", body="Second body.\n")
    configuration = fake_configuration(fake_provider)
    configuration_skills_set(configuration, [own])
    fake_provider.script(Reply(text="ok"))
    run_to_end(django_capture_on_commit_callbacks, configuration, request_skills=[extra.pk, own.pk])
    user = fake_provider.bodies()[0]["messages"][1]["content"]
    assert user.count("First body.") == 1
    assert user.index("First body.") < user.index("Second body.")


def test_progressive_mode_lists_names_and_loads_a_body_on_demand(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    skill = skill_make(
        tmp_path, name="house-style", body="The full house style.\n", data_class=DataClass.EDITOR_CONTENT
    )
    configuration = fake_configuration(fake_provider, skill_mode="progressive", allowed_tool_groups=[])
    configuration_skills_set(configuration, [skill])
    fake_provider.script(Reply.tools(("c1", "load_skill", {"name": "house-style"})), Reply(text="ok"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    first, second = fake_provider.bodies()
    assert "The full house style." not in first["messages"][1]["content"]
    assert "house-style" in first["messages"][1]["content"]
    assert [t["function"]["name"] for t in first["tools"]] == ["load_skill"]
    loaded = RunMessage.objects.get(run=run, role="tool")
    assert "The full house style." in loaded.content
    assert loaded.data_class == "editor_content"
    assert "The full house style." in second["messages"][-1]["content"]


def test_load_skill_refuses_a_skill_the_zone_does_not_permit(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    secret_skill = skill_make(
        tmp_path, name="ops-runbook", body="Internal runbook.\n", data_class=DataClass.PUBLIC_CONTENT
    )
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, skill_mode="progressive", allowed_tool_groups=[]
    )
    fake_provider.script(Reply.tools(("c1", "load_skill", {"name": "ops-runbook"})), Reply(text="ok"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration, request_skills=[])
    assert RunMessage.objects.get(run=run, role="tool").content == (
        "Error: no skill named 'ops-runbook' is available to this run."
    )
    assert "Internal runbook." not in fake_provider.wire_text()
    assert secret_skill.pk is not None


def test_load_skill_returns_the_whole_body_of_a_skill_larger_than_the_skill_block_bound(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    # 60 KiB: under the 64 KiB body cap, well over the skill block's 24,000-byte default bound.
    lines = [f"Rule {n:05d}: keep sentences short and concrete." for n in range(1320)]
    body = "\n".join(lines) + "\n"
    assert 60 * 1024 <= len(body.encode()) < 64 * 1024
    skill = skill_make(tmp_path, name="house-style", body=body, data_class=DataClass.EDITOR_CONTENT)
    configuration = fake_configuration(
        fake_provider, skill_mode="progressive", allowed_tool_groups=[], model_context_window=128_000
    )
    configuration_skills_set(configuration, [skill])
    fake_provider.script(Reply.tools(("c1", "load_skill", {"name": "house-style"})), Reply(text="ok"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    loaded = RunMessage.objects.get(run=run, role="tool")
    assert loaded.content.startswith(GUARD_PREAMBLE)
    assert loaded.content.count(BEGIN_MARKER) == 1
    assert loaded.content.endswith(f"{body.strip()}\n{END_MARKER}")
    assert loaded.data_class == "editor_content"
    second = fake_provider.bodies()[1]
    assert second["messages"][-1]["content"] == loaded.content
