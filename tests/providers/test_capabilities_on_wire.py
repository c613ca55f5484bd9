"""Request bodies follow the model's capabilities (catalogue, then the row), never its name."""

from __future__ import annotations

import pytest

from catalog.models import ConfigurationFallback, LlmModel, ProviderKind
from context_assembly.messages import Message
from context_assembly.profiles import DEFAULT_CAPABILITIES, ModelCapabilities, catalogue_get
from governance.vocabulary import TrustZone
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.values import ProviderCall, ProviderConfig
from tests.agents.runs import run_to_end
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import FakeProvider, Reply, server_error

SYSTEM = Message(role="system", content="You are terse.")
USER = Message(role="user", content="What is the capital of France?")
REASONING = catalogue_get("o3").capabilities
SAMPLING = {"temperature", "top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs"}


@pytest.fixture
def second_fake():
    with FakeProvider() as fake:
        yield fake


def adapter_body(fake: FakeProvider, capabilities: ModelCapabilities, *, stream: bool = False) -> dict:
    config = ProviderConfig(
        identifier="openai-test", kind="openai_compatible", base_url=fake.openai_base_url, max_retries=0
    )
    adapter = OpenAICompatibleAdapter(config)
    call = ProviderCall(
        model_id="any-name",
        messages=(SYSTEM, USER),
        max_tokens=64,
        temperature=0.2,
        stream=stream,
        capabilities=capabilities,
    )
    try:
        adapter.complete(call)
    finally:
        adapter.close()
    (body,) = fake.bodies()
    return body


@pytest.mark.parametrize("stream", [False, True])
def test_a_reasoning_model_gets_max_completion_tokens_the_developer_role_and_no_sampling(
    fake_provider, stream
):
    body = adapter_body(fake_provider, REASONING, stream=stream)
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert SAMPLING.isdisjoint(body)
    assert [m["role"] for m in body["messages"]] == ["developer", "user"]
    assert body["messages"][0]["content"] == "You are terse."


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_model_gets_max_tokens_the_system_role_and_its_temperature(fake_provider, stream):
    body = adapter_body(fake_provider, DEFAULT_CAPABILITIES, stream=stream)
    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body
    assert body["temperature"] == 0.2
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def _configuration(fake: FakeProvider, model_id: str, **model_fields):
    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake.openai_base_url,
        trust_zone=TrustZone.LOCAL,
        timeout_seconds=5,
        max_retries=0,
    )
    model = model_make(provider=provider, model_id=model_id, **model_fields)
    return configuration_make(model=model, system_prompt="Be brief.", allowed_tool_groups=["content"])


@pytest.mark.django_db
@pytest.mark.parametrize("model_id", ["o3-mini-2025-01-31", "o3", "gpt-5-mini-2025-08-07"])
def test_a_run_on_a_reasoning_model_sends_what_its_api_accepts(
    fake_provider, django_capture_on_commit_callbacks, model_id
):
    configuration = _configuration(fake_provider, model_id)
    fake_provider.script(Reply(text="done"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    (body,) = fake_provider.bodies()
    assert body["model"] == model_id
    assert body["max_completion_tokens"] == 4_096  # the row's output limit is the reserve
    assert "max_tokens" not in body
    assert SAMPLING.isdisjoint(body)
    assert [m["role"] for m in body["messages"]] == ["developer", "user"]


@pytest.mark.django_db
def test_each_fallback_gets_its_own_models_parameters(
    fake_provider, second_fake, django_capture_on_commit_callbacks
):
    configuration = _configuration(fake_provider, "gpt-4o-2024-08-06")
    fallback_provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE, base_url=second_fake.openai_base_url, max_retries=0
    )
    fallback = model_make(provider=fallback_provider, model_id="o4-mini-2025-04-16")
    ConfigurationFallback.objects.create(configuration=configuration, model=fallback, position=0)
    fake_provider.script(server_error())
    second_fake.script(Reply(text="from the fallback"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    (primary,) = fake_provider.bodies()
    (secondary,) = second_fake.bodies()
    assert (primary["max_tokens"], primary["messages"][0]["role"]) == (4_096, "system")
    assert "max_completion_tokens" not in primary
    assert (secondary["max_completion_tokens"], secondary["messages"][0]["role"]) == (4_096, "developer")
    assert "max_tokens" not in secondary
    assert primary["messages"][1:] == secondary["messages"][1:]


@pytest.mark.django_db
def test_a_rows_declared_capabilities_override_the_catalogue(
    fake_provider, django_capture_on_commit_callbacks
):
    # A gateway in front of o3 that translates max_tokens itself, and a self-hosted reasoning model.
    gateway = _configuration(fake_provider, "o3", token_parameter="max_tokens", system_role="system")
    reasoner = _configuration(
        fake_provider,
        "my-reasoner",
        token_parameter="max_completion_tokens",
        accepts_sampling=False,
        system_role="developer",
    )
    fake_provider.script(Reply(text="one"), Reply(text="two"))
    run_to_end(django_capture_on_commit_callbacks, gateway)
    run_to_end(django_capture_on_commit_callbacks, reasoner)
    first, second = fake_provider.bodies()
    assert ("max_tokens" in first, "max_completion_tokens" in first) == (True, False)
    assert first["messages"][0]["role"] == "system"
    assert ("max_tokens" in second, "max_completion_tokens" in second) == (False, True)
    assert second["messages"][0]["role"] == "developer"


@pytest.mark.django_db
def test_a_model_outside_the_catalogue_keeps_the_plain_chat_request(fake_provider):
    model = model_make(model_id="llama3.2:3b")
    assert model.capabilities == DEFAULT_CAPABILITIES
    assert LlmModel.objects.get(pk=model.pk).token_parameter == ""
