"""Each target is fitted to its own window and output limit: a fallback that cannot hold the context's
floor is skipped (and says so), never sent an oversized prompt; ``max_tokens`` is clamped to the
serving model's output limit; usage is read against the window of the model that served."""

from __future__ import annotations

from typing import Any

import pytest

from agents.models import AgentStep
from agents.runtime.transcript import run_context, run_usage
from catalog.models import ConfigurationFallback, LlmModel, ProviderKind
from context_assembly.estimator import Estimator
from context_assembly.fitting import DEFAULT_SAFETY_RATIO
from context_assembly.messages import Message, ToolSpec
from context_assembly.profiles import ModelProfile
from governance.vocabulary import Provenance, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import model_make, provider_make
from tests.fakes.provider_server import FakeProvider, Reply, server_error

pytestmark = pytest.mark.django_db

SMALL_WINDOW = 8_192
SMALL_OUTPUT = 4_096
# A sentence that o200k_base and cl100k_base both count at a steady rate.
SENTENCE = "The quarterly launch review covers pricing, support load and the migration plan. "


@pytest.fixture
def small_fake():
    with FakeProvider() as fake:
        yield fake


def with_small_fallback(primary: FakeProvider, fallback: FakeProvider, **fields: Any):
    """``gpt-4o`` (128,000 window, 16,384 output) on ``primary``, with one fallback ``gpt-4`` (8,192
    window, 4,096 output, cl100k_base) on ``fallback``; neither retries."""
    configuration = fake_configuration(primary, model_max_output_tokens=16_384, **fields)
    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fallback.openai_base_url,
        trust_zone=TrustZone.LOCAL,
        timeout_seconds=5,
        max_retries=0,
        identifier="small",
    )
    small = model_make(
        provider=provider,
        model_id="gpt-4",
        context_window=SMALL_WINDOW,
        max_output_tokens=SMALL_OUTPUT,
        tokenizer="cl100k_base",
    )
    ConfigurationFallback.objects.create(configuration=configuration, model=small, position=0)
    configuration.refresh_from_db()
    return configuration, small


def model_for(body: dict[str, Any]) -> LlmModel:
    return LlmModel.objects.get(model_id=body["model"])


def wire_tokens(body: dict[str, Any], model: LlmModel) -> int:
    """The prompt of a recorded body, counted with the one estimator for the model it went to."""
    profile = ModelProfile(model.model_id, model.context_window, model.max_output_tokens, model.tokenizer)
    messages = [Message.from_openai(raw) for raw in body["messages"]]
    specs = [ToolSpec.from_openai(raw) for raw in body.get("tools", [])]
    return Estimator(profile).count_request(messages, specs)


def assert_nothing_oversized(*fakes: FakeProvider) -> None:
    """Every recorded request fits its model's window: prompt + reply limit + safety margin."""
    for fake in fakes:
        for body in fake.bodies():
            model = model_for(body)
            safety = -(-model.context_window * 3 // 100)
            assert DEFAULT_SAFETY_RATIO == 0.03
            assert wire_tokens(body, model) + body["max_tokens"] + safety <= model.context_window
            assert body["max_tokens"] <= model.max_output_tokens


def long_input(tokens: int) -> str:
    text = SENTENCE * (tokens // 14 + 1)
    return text


def test_a_fallback_whose_window_cannot_hold_the_floor_is_skipped_with_its_reason(
    fake_provider, small_fake, django_capture_on_commit_callbacks
):
    configuration, _ = with_small_fallback(fake_provider, small_fake)
    fake_provider.script(server_error())
    small_fake.script("Never asked.")

    run = run_to_end(
        django_capture_on_commit_callbacks, configuration, input_text=long_input(20_000), max_tokens=4_096
    )

    assert (run.status, run.termination_reason) == ("failed", "retries_exhausted")
    assert len(fake_provider.requests) == 1
    assert small_fake.requests == []  # the fallback was never sent the prompt it cannot hold
    assert_nothing_oversized(fake_provider, small_fake)
    primary_prompt = wire_tokens(fake_provider.bodies()[0], configuration.model)
    assert primary_prompt > 20_000
    step = AgentStep.objects.get(run=run)
    assert step.status == "failed"
    [skipped] = step.skipped_targets
    floor = skipped["estimated"]
    assert skipped == {
        "provider": "small",
        "model": "gpt-4",
        "reason": "context_overflow",
        "estimated": floor,
        "budget": SMALL_WINDOW - SMALL_OUTPUT - 246,
        "window": SMALL_WINDOW,
    }
    assert floor > SMALL_WINDOW  # counted with the fallback's own tokenizer (cl100k_base)
    assert floor != primary_prompt
    # No model served: the figures are the serving model's, against its window.
    assert (step.model_id, step.context_window, step.max_tokens) == (configuration.model_id, 128_000, 4_096)
    assert step.max_tokens_clamped is False


def test_a_fallback_gets_its_own_fit_and_the_usage_names_its_window(
    fake_provider, small_fake, django_capture_on_commit_callbacks
):
    """Two tool turns on the primary, the first one long; then the primary fails and the small
    fallback serves the third step with the oldest turn dropped to fit its window."""
    configuration, small = with_small_fallback(fake_provider, small_fake)
    long_turn = Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]}), text=long_input(6_000))
    short_turn = Reply.tools(("c2", "snippets_by_tag", {"tags": ["y"]}), text="Looking again.")
    fake_provider.script(long_turn, short_turn, server_error())
    small_fake.script(Reply(text="Served small.", prompt_tokens=700))

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert_nothing_oversized(fake_provider, small_fake)
    primary_last, [small_body] = fake_provider.bodies()[-1], small_fake.bodies()
    assert len(small_body["messages"]) == len(primary_last["messages"]) - 2  # the long turn went
    assert small_body["max_tokens"] == SMALL_OUTPUT
    step = AgentStep.objects.get(run=run, index=2)
    assert (step.model_id, step.context_window, step.breakdown["dropped_turns"]) == (
        small.pk,
        SMALL_WINDOW,
        1,
    )
    assert step.breakdown["window"] == SMALL_WINDOW
    assert step.estimated_prompt_tokens == wire_tokens(small_body, small)
    assert step.skipped_targets == []
    usage = run_usage(run)
    assert (usage.model, usage.context_window) == ("gpt-4", SMALL_WINDOW)
    assert usage.used_tokens.as_dict() == {"value": 700, "provenance": Provenance.PROVIDER_REPORTED}
    assert run_context(run).context_usage == usage


def test_max_tokens_is_clamped_to_the_serving_models_output_limit_and_the_clamp_recorded(
    fake_provider, small_fake, django_capture_on_commit_callbacks
):
    configuration, small = with_small_fallback(fake_provider, small_fake)
    fake_provider.script(server_error())
    small_fake.script("Short answer.")

    run = run_to_end(django_capture_on_commit_callbacks, configuration, max_tokens=8_000)

    assert run.status == "completed"
    assert [body["max_tokens"] for body in fake_provider.bodies()] == [8_000]
    assert [body["max_tokens"] for body in small_fake.bodies()] == [SMALL_OUTPUT]
    step = AgentStep.objects.get(run=run)
    assert (step.model_id, step.max_tokens, step.max_tokens_clamped) == (small.pk, SMALL_OUTPUT, True)
    assert step.breakdown["reserve"] == SMALL_OUTPUT


def test_max_tokens_within_the_serving_models_limit_is_not_clamped(
    fake_provider, small_fake, django_capture_on_commit_callbacks
):
    configuration, _ = with_small_fallback(fake_provider, small_fake)
    fake_provider.script("Fine.")

    run = run_to_end(django_capture_on_commit_callbacks, configuration, max_tokens=8_000)

    step = AgentStep.objects.get(run=run)
    assert (step.max_tokens, step.max_tokens_clamped, step.context_window) == (8_000, False, 128_000)
