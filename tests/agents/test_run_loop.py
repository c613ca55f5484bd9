"""The governed step end to end, against the loopback fake provider (assertions on the wire)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from agents.models import AgentStep, RunMessage, ToolCallRecord
from agents.runtime.transcript import run_context
from catalog.models import LlmModel
from governance.models import GovernanceEvent
from governance.vocabulary import Provenance
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply, count_prompt_tokens

pytestmark = pytest.mark.django_db


def test_tool_calling_run_completes_with_every_step_recorded(
    fake_provider, django_capture_on_commit_callbacks
):
    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    fake_provider.script(
        Reply.tools(("call_1", "snippets_by_tag", {"tags": ["tone"]})),
        Reply(text="Our tone is warm and brief."),
    )
    configuration = fake_configuration(fake_provider, system_prompt="You help editors.")
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    steps = list(AgentStep.objects.filter(run=run).order_by("index"))
    assert [(s.index, s.status, s.usage_provenance) for s in steps] == [
        (0, "completed", "provider_reported"),
        (1, "completed", "provider_reported"),
    ]
    bodies = fake_provider.bodies()
    assert len(bodies) == 2
    assert [s.reported_prompt_tokens for s in steps] == [count_prompt_tokens(b) for b in bodies]
    assert [m["role"] for m in bodies[1]["messages"]] == ["system", "user", "assistant", "tool"]
    assert bodies[1]["messages"][3] == {
        "role": "tool",
        "content": "Tone:\nWarm and brief.",
        "tool_call_id": "call_1",
    }
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["snippets_by_tag"]
    transcript = list(RunMessage.objects.filter(run=run).values_list("role", "content"))
    assert transcript == [
        ("assistant", ""),
        ("tool", "Tone:\nWarm and brief."),
        ("assistant", "Our tone is warm and brief."),
    ]
    assert ToolCallRecord.objects.get(run=run).status == "completed"
    assert run.prompt_tokens_total == sum(s.reported_prompt_tokens for s in steps)


def test_context_usage_is_the_last_completed_steps_prompt(fake_provider, django_capture_on_commit_callbacks):
    fake_provider.script(
        replace(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), prompt_tokens=1234),
        Reply(text="done", prompt_tokens=1500),
    )
    run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))
    usage = run_context(run).context_usage
    assert usage.used_tokens.value == 1500
    assert usage.used_tokens.provenance == Provenance.PROVIDER_REPORTED
    assert usage.context_window == 128_000
    assert run.prompt_tokens_total == 2734  # cumulative, a different fact from the fill


def test_step_without_reported_usage_records_the_estimate(fake_provider, django_capture_on_commit_callbacks):
    fake_provider.script(Reply(text="done", include_usage=False))
    run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))
    step = AgentStep.objects.get(run=run)
    assert (step.reported_prompt_tokens, step.usage_provenance) == (None, "estimated")
    assert step.estimated_prompt_tokens == step.breakdown["estimated"]
    used = run_context(run).context_usage.used_tokens
    assert (used.value, used.provenance) == (step.estimated_prompt_tokens, Provenance.ESTIMATED)


def test_estimate_equals_what_the_fake_counted_on_the_wire(fake_provider, django_capture_on_commit_callbacks):
    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    fake_provider.script(Reply(text="ok"))
    configuration = fake_configuration(
        fake_provider, system_prompt="Be kind.", allowed_tool_groups=[], snippet_tags=["tone"]
    )
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    step = AgentStep.objects.get(run=run)
    assert step.estimated_prompt_tokens == count_prompt_tokens(fake_provider.bodies()[0])
    assert step.calibration_ratio == 1.0
    breakdown = step.breakdown
    lines = ("system_prompt", "snippets", "skills", "caller_context", "tool_specs", "transcript", "tail_note")
    assert sum(breakdown[line] for line in lines) == breakdown["estimated"]
    model = LlmModel.objects.get(pk=run.configuration.model_id)
    assert (model.calibration_factor, model.calibration_samples) == (1.0, 1)


def test_max_iterations_stops_a_run_that_keeps_calling_tools(
    fake_provider, django_capture_on_commit_callbacks
):
    fake_provider.script(*[Reply.tools((f"c{i}", "snippets_by_tag", {"tags": ["x"]})) for i in range(5)])
    run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider, max_iterations=3))
    assert (run.status, run.termination_reason) == ("failed", "max_iterations")
    assert AgentStep.objects.filter(run=run).count() == 3
    assert len(fake_provider.requests) == 3


def test_context_that_cannot_fit_stops_before_any_call(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake_provider, model_context_window=300, model_max_output_tokens=200)
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text="word " * 400)
    assert (run.status, run.termination_reason) == ("failed", "context_truncated")
    step = AgentStep.objects.get(run=run)
    assert step.status == "refused"
    assert step.breakdown["estimated"] > step.breakdown["budget"]
    assert fake_provider.requests == []


def test_tail_note_reports_usage_at_the_end_never_in_the_system_prompt(
    fake_provider, django_capture_on_commit_callbacks
):
    fake_provider.script(
        replace(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), prompt_tokens=777), Reply(text="ok")
    )
    configuration = fake_configuration(fake_provider, system_prompt="Be kind.", context_usage_note="tail")
    run_to_end(django_capture_on_commit_callbacks, configuration)
    first, second = fake_provider.bodies()
    assert first["messages"][-1]["content"].startswith("Context usage: unavailable before the first step")
    assert second["messages"][-1] == {
        "role": "user",
        "content": "Context usage: 777 of 128,000 tokens used by the last step (provider_reported).",
    }
    assert "Context usage" not in second["messages"][0]["content"]


def test_secret_in_a_response_is_redacted_before_it_is_stored(
    fake_provider, django_capture_on_commit_callbacks
):
    token = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    fake_provider.script(Reply(text=f"Use the token {token} to deploy."))
    run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))
    stored = RunMessage.objects.get(run=run).content
    assert token not in stored
    assert stored == "Use the token [REDACTED:github_token] to deploy."
    event = GovernanceEvent.objects.get(decision="secret_redacted")
    assert token not in json.dumps(list(GovernanceEvent.objects.values()), default=str)
    assert event.reason == "1 x github_token"
