"""Governance on the wire: refused sources never leave, observed ones do and are recorded."""

from __future__ import annotations

import pytest

from agents.models import AgentStep, RunMessage
from agents.services import CallerContextItem
from catalog.models import Provider
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Enforcement, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import configuration_skills_set, skill_make, snippet_make
from tests.fakes.provider_server import Reply
from tools.registry import REGISTRY, Tool, ToolEffect

pytestmark = pytest.mark.django_db

MARKER = "marker-text-that-must-not-leave"


@pytest.fixture
def diagnostics_tool():
    tool = Tool(
        name="read_logs",
        description="Read the service logs.",
        parameters={"type": "object", "properties": {}},
        group="system",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: f"log line {MARKER}",
    )
    REGISTRY.register(tool)
    yield tool
    REGISTRY.unregister(tool.name)


def refused_event() -> tuple[str, str, str, str]:
    event = GovernanceEvent.objects.get(decision="context_blocked")
    return event.outcome, event.source_kind, event.source_identifier, event.zone


def assert_refused_before_any_call(run, fake) -> None:
    assert (run.status, run.termination_reason) == ("failed", "policy_denied")
    assert fake.requests == []
    assert MARKER not in fake.wire_text()
    assert RunMessage.objects.filter(run=run).count() == 0
    assert AgentStep.objects.get(run=run).status == "refused"


def test_refuses_system_prompt_above_the_zone(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_GLOBAL,
        identifier="ops",
        system_prompt=MARKER,
        system_prompt_data_class=DataClass.INTERNAL_CONFIGURATION,
        system_prompt_ceiling=TrustZone.EXTERNAL_EU,
    )
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert_refused_before_any_call(run, fake_provider)
    assert refused_event() == ("enforced", "system_prompt", "ops", "external_global")


def test_refuses_snippet_above_the_zone(fake_provider, django_capture_on_commit_callbacks):
    snippet_make(
        identifier="runbook",
        text=MARKER,
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert_refused_before_any_call(run, fake_provider)
    assert refused_event() == ("enforced", "snippet", "runbook", "external_eu")


def test_refuses_caller_context_above_the_zone(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake_provider, zone=TrustZone.PRIVATE_HOSTED)
    run = run_to_end(
        django_capture_on_commit_callbacks,
        configuration,
        caller_context=(CallerContextItem("vault", MARKER, DataClass.SECRET_ADJACENT),),
    )
    assert_refused_before_any_call(run, fake_provider)
    assert refused_event() == ("enforced", "caller_context", "context[0]", "private_hosted")
    assert "context[0]" in run.error_message and "vault" not in run.error_message


def test_refuses_task_input_above_the_zone(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)
    run = run_to_end(
        django_capture_on_commit_callbacks,
        configuration,
        input_text=MARKER,
        input_data_class=DataClass.SOURCE_CODE,
    )
    assert_refused_before_any_call(run, fake_provider)
    assert refused_event() == ("enforced", "task_input", "task_input", "external_global")


def test_unknown_caller_context_class_is_refused_outside_local(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, zone=TrustZone.PRIVATE_HOSTED)
    run = run_to_end(
        django_capture_on_commit_callbacks,
        configuration,
        caller_context=(CallerContextItem("notes", MARKER, "confidential"),),
    )
    assert_refused_before_any_call(run, fake_provider)


def test_refuses_tool_output_when_the_zone_widens_mid_run(
    fake_provider, diagnostics_tool, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, zone=TrustZone.LOCAL, allowed_tool_groups=["system"])
    provider = Provider.objects.get(pk=configuration.model.provider_id)

    def widen_zone(context, arguments):
        Provider.objects.filter(pk=provider.pk).update(trust_zone=TrustZone.EXTERNAL_GLOBAL)
        return f"log line {MARKER}"

    REGISTRY.unregister("read_logs")
    REGISTRY.register(
        Tool(
            name="read_logs",
            description="Read the service logs.",
            parameters={"type": "object", "properties": {}},
            group="system",
            effect=ToolEffect.READ_ONLY,
            handler=widen_zone,
        )
    )
    fake_provider.script(Reply.tools(("c1", "read_logs", {})), Reply(text="never asked"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert (run.status, run.termination_reason) == ("failed", "policy_denied")
    assert len(fake_provider.requests) == 1
    assert MARKER not in fake_provider.wire_text()
    assert refused_event() == ("enforced", "tool_output", "c1", "external_global")


def test_tool_above_the_zone_is_neither_offered_nor_executed(
    fake_provider, diagnostics_tool, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_EU, allowed_tool_groups=["system"]
    )
    fake_provider.script(Reply.tools(("c1", "read_logs", {})), Reply(text="ok"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert "tools" not in fake_provider.bodies()[0]
    assert MARKER not in fake_provider.wire_text()
    result = RunMessage.objects.get(run=run, role="tool")
    assert result.content == "Tool 'read_logs' is not available."
    event = GovernanceEvent.objects.get(decision="tool_denied")
    assert event.reason == "read_logs: trust_zone (system_diagnostics in external_eu)"
    assert run.status == "completed"


def test_observed_snippet_is_sent_and_recorded(fake_provider, django_capture_on_commit_callbacks):
    snippet_make(
        identifier="legacy",
        text=MARKER,
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
        enforcement=Enforcement.OBSERVE,
    )
    fake_provider.script(Reply(text="ok"))
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    assert MARKER in fake_provider.wire_text()
    assert refused_event() == ("observed", "snippet", "legacy", "external_eu")


def test_observed_snippet_is_refused_under_enforce_all(
    fake_provider, settings, django_capture_on_commit_callbacks
):
    settings.GOVERNANCE_ENFORCEMENT = "enforce_all"
    snippet_make(
        identifier="legacy",
        text=MARKER,
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
        enforcement=Enforcement.OBSERVE,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert_refused_before_any_call(run, fake_provider)


def test_a_less_trusted_fallback_decides_the_zone(fake_provider, django_capture_on_commit_callbacks):
    snippet_make(
        identifier="runbook",
        text=MARKER,
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.LOCAL, snippet_tags=["ops"], fallback_zones=(TrustZone.EXTERNAL_GLOBAL,)
    )
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert_refused_before_any_call(run, fake_provider)


def test_refuses_skill_above_the_zone(fake_provider, tmp_path, django_capture_on_commit_callbacks):
    skill = skill_make(tmp_path, body=MARKER, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.EXTERNAL_EU)
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)
    configuration_skills_set(configuration, [skill])
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert_refused_before_any_call(run, fake_provider)
    assert refused_event() == ("enforced", "skill", skill.identifier, "external_global")
