"""A step's tools are offered and run for the zone its context was checked for: the zone of the models
the send may call. A switched-off fallback neither receives the step nor narrows its tools."""

from __future__ import annotations

import pytest

from agents.models import RunMessage
from catalog.models import ConfigurationFallback, LlmModel, ProviderKind
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import model_make, provider_make, snippet_make
from tests.fakes.provider_server import Reply
from tools.registry import REGISTRY, Tool, ToolEffect

pytestmark = pytest.mark.django_db


@pytest.fixture
def source_tool():
    tool = Tool(
        name="read_source",
        description="Read a source file.",
        parameters={"type": "object", "properties": {}},
        group="content",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: "def main(): ...",
        data_class=DataClass.SOURCE_CODE,
    )
    REGISTRY.register(tool)
    yield tool
    REGISTRY.unregister(tool.name)


def test_a_switched_off_fallback_does_not_restrict_the_tools_of_a_step(
    fake_provider, source_tool, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, zone=TrustZone.LOCAL, allowed_tools=["read_source"])
    external = model_make(zone=TrustZone.EXTERNAL_GLOBAL)
    ConfigurationFallback.objects.create(configuration=configuration, model=external, position=0)
    LlmModel.objects.filter(pk=external.pk).update(is_active=False)
    fake_provider.script(Reply.tools(("c1", "read_source", {})), Reply(text="Read it."))

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert run.status == "completed", (run.termination_reason, run.error_message)
    assert "read_source" in [tool["function"]["name"] for tool in fake_provider.bodies()[0]["tools"]]
    assert RunMessage.objects.get(run=run, role="tool").content == "def main(): ..."
    assert not GovernanceEvent.objects.filter(decision="tool_denied").exists()


@pytest.fixture
def diagnostics_tool():
    tool = Tool(
        name="read_diagnostics",
        description="Read the node diagnostics.",
        parameters={"type": "object", "properties": {}},
        group="content",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: "db-2: healthy",
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
    )
    REGISTRY.register(tool)
    yield tool
    REGISTRY.unregister(tool.name)


def test_a_step_routed_to_the_trusted_model_runs_its_tools_for_the_trusted_zone(
    fake_provider, diagnostics_tool, django_capture_on_commit_callbacks
):
    snippet_make(
        identifier="diagnostics",
        text="Node db-2 runs the primary.",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_GLOBAL,
        snippet_tags=["ops"],
        allowed_tools=["read_diagnostics"],
    )
    trusted_provider = provider_make(
        identifier="on-prem",
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake_provider.openai_base_url,
        trust_zone=TrustZone.LOCAL,
        max_retries=0,
    )
    configuration.trusted_model = model_make(provider=trusted_provider, model_id="on-prem-8k")
    configuration.save()
    fake_provider.script(Reply.tools(("c1", "read_diagnostics", {})), Reply(text="Healthy."))

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert run.status == "completed", (run.termination_reason, run.error_message)
    assert [body["model"] for body in fake_provider.bodies()] == ["on-prem-8k", "on-prem-8k"]
    assert "read_diagnostics" in [tool["function"]["name"] for tool in fake_provider.bodies()[0]["tools"]]
    assert RunMessage.objects.get(run=run, role="tool").content == "db-2: healthy"
    assert not GovernanceEvent.objects.filter(decision="tool_denied").exists()
