"""Provider faults through the runtime and the adapters: classified, retried only when retryable,
fallbacks walked only for retryable failures, and the run's termination reason says which happened."""

from __future__ import annotations

import functools

import pytest

from agents.models import AgentStep, RunMessage
from agents.runtime import send
from agents.runtime.transcript import run_context
from catalog.models import ConfigurationFallback, Provider
from context_assembly.messages import Message
from governance.vocabulary import Provenance
from providers import dispatch
from providers.failures import FailureClass, ProviderError
from providers.values import ProviderCall, ProviderConfig
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import model_make, provider_make
from tests.fakes.provider_server import (
    FakeProvider,
    RawReply,
    Reply,
    rate_limited,
    server_error,
    unauthorized,
)

MALFORMED_JSON = RawReply(b'{"id": "chatcmpl-1", "choices": [{')


@pytest.fixture
def second_fake():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The runtime's dispatch records its backoff waits here instead of sleeping."""
    recorded: list[float] = []
    fast = functools.partial(dispatch.complete_with_fallbacks, sleep=recorded.append)
    monkeypatch.setattr(send, "complete_with_fallbacks", fast)
    fast_stream = functools.partial(dispatch.stream_with_fallbacks, sleep=recorded.append)
    monkeypatch.setattr(send, "stream_with_fallbacks", fast_stream)
    return recorded


def configured(
    fake: FakeProvider, *, retries: int = 0, timeout: float = 5.0, fallback: FakeProvider | None = None
):
    configuration = fake_configuration(fake)
    Provider.objects.filter(pk=configuration.model.provider_id).update(
        max_retries=retries, timeout_seconds=timeout
    )
    if fallback is not None:
        provider = provider_make(kind="openai_compatible", base_url=fallback.openai_base_url, max_retries=0)
        model = model_make(provider=provider, model_id="gpt-4o-mini")
        ConfigurationFallback.objects.create(configuration=configuration, model=model, position=0)
    configuration.refresh_from_db()
    return configuration


def failed_step(run) -> AgentStep:
    step = AgentStep.objects.get(run=run)
    assert step.status == "failed"
    assert not RunMessage.objects.filter(run=run, role="assistant").exists()
    return step


# --- through the runtime -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_server_error_is_tried_once_plus_max_retries_then_ends_as_retries_exhausted(
    fake_provider, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(server_error(), server_error(), "never sent")
    run = run_to_end(django_capture_on_commit_callbacks, configured(fake_provider, retries=1))
    assert (run.status, run.termination_reason) == ("failed", "retries_exhausted")
    assert run.error_code == FailureClass.SERVER_ERROR
    assert len(fake_provider.requests) == 2
    assert fake_provider.pending() == 1
    assert waits == [0.5]
    failed_step(run)


@pytest.mark.django_db
def test_unauthorized_is_tried_once_and_never_walks_fallbacks(
    fake_provider, second_fake, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(unauthorized())
    configuration = configured(fake_provider, retries=2, fallback=second_fake)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert (run.status, run.termination_reason) == ("failed", "provider_failed")
    assert run.error_code == FailureClass.AUTH
    assert (len(fake_provider.requests), len(second_fake.requests)) == (1, 0)
    assert waits == []
    failed_step(run)


@pytest.mark.django_db
def test_exhausted_server_errors_walk_to_the_fallback_which_serves_the_step(
    fake_provider, second_fake, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(server_error(), server_error())
    second_fake.script("Served by the fallback.")
    configuration = configured(fake_provider, retries=1, fallback=second_fake)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert (len(fake_provider.requests), len(second_fake.requests)) == (2, 1)
    assert second_fake.bodies()[0]["model"] == "gpt-4o-mini"
    step = AgentStep.objects.get(run=run)
    assert step.model.model_id == "gpt-4o-mini"
    assert RunMessage.objects.get(run=run, role="assistant").content == "Served by the fallback."
    assert waits == [0.5]  # the backoff between the primary's tries; none before the fallback


@pytest.mark.django_db
def test_rate_limit_waits_the_providers_retry_after_then_succeeds(
    fake_provider, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(rate_limited(retry_after=3), "Done after waiting.")
    run = run_to_end(django_capture_on_commit_callbacks, configured(fake_provider, retries=1))
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert waits == [3.0]
    assert len(fake_provider.requests) == 2


@pytest.mark.django_db
def test_rate_limit_with_no_retries_left_ends_as_retries_exhausted(
    fake_provider, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(rate_limited(retry_after=1))
    run = run_to_end(django_capture_on_commit_callbacks, configured(fake_provider, retries=0))
    assert (run.termination_reason, run.error_code) == ("retries_exhausted", FailureClass.RATE_LIMIT)
    assert len(fake_provider.requests) == 1
    assert waits == []


@pytest.mark.django_db
def test_timeout_is_retried_and_the_run_ends_as_retries_exhausted(
    fake_provider, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(Reply(text="late", latency=1.0), Reply(text="late", latency=1.0))
    configuration = configured(fake_provider, retries=1, timeout=0.3)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert (run.termination_reason, run.error_code) == ("retries_exhausted", FailureClass.TIMEOUT)
    assert len(fake_provider.requests) == 2
    assert waits == [0.5]
    failed_step(run)


@pytest.mark.django_db
def test_malformed_json_is_not_retried_nor_sent_to_the_fallback(
    fake_provider, second_fake, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(MALFORMED_JSON)
    configuration = configured(fake_provider, retries=2, fallback=second_fake)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert (run.termination_reason, run.error_code) == ("provider_failed", FailureClass.MALFORMED)
    assert (len(fake_provider.requests), len(second_fake.requests)) == (1, 0)
    assert waits == []
    failed_step(run)


@pytest.mark.django_db
def test_reply_without_usage_leaves_reported_figures_empty_and_usage_estimated(
    fake_provider, waits, django_capture_on_commit_callbacks
):
    fake_provider.script(Reply(text="No usage here.", include_usage=False))
    run = run_to_end(django_capture_on_commit_callbacks, configured(fake_provider))
    step = AgentStep.objects.get(run=run)
    reported = (step.reported_prompt_tokens, step.cached_tokens, step.completion_tokens)
    assert reported == (None, None, None)
    assert step.usage_provenance == Provenance.ESTIMATED
    assert (run.prompt_tokens_total, run.completion_tokens_total) == (0, 0)
    used = run_context(run).context_usage.used_tokens
    assert (used.value, used.provenance) == (step.estimated_prompt_tokens, Provenance.ESTIMATED)
    assert used.value is not None and used.value > 0


# --- the streaming path of the adapters --------------------------------------------------------------------

STREAM_CALL = ProviderCall(
    model_id="unused", messages=(Message(role="user", content="Hello."),), max_tokens=32, stream=True
)


def stream_target(fake: FakeProvider, kind: str, retries: int) -> tuple[ProviderConfig, str]:
    base_url = fake.openai_base_url if kind == "openai_compatible" else fake.anthropic_base_url
    config = ProviderConfig(
        identifier=f"{kind}-stream", kind=kind, base_url=base_url, timeout_seconds=2, max_retries=retries
    )
    return config, "model-x"


KINDS = pytest.mark.parametrize("kind", ["openai_compatible", "anthropic"])


@KINDS
def test_truncated_stream_is_a_retryable_connection_failure(fake_provider, kind):
    fake_provider.script(Reply(text="x" * 200, truncate_stream=True), Reply(text="whole answer"))
    waited: list[float] = []
    result = dispatch.complete_with_fallbacks(
        [stream_target(fake_provider, kind, retries=1)], STREAM_CALL, sleep=waited.append
    )
    assert result.attempts[0].failure_class == FailureClass.CONNECTION
    assert result.answer.text == "whole answer"
    assert len(fake_provider.requests) == 2
    assert all(body["stream"] is True for body in fake_provider.bodies())
    assert waited == [0.5]


@KINDS
def test_malformed_stream_event_is_not_retried(fake_provider, second_fake, kind):
    fake_provider.script(Reply(text="hello there", malformed=True))
    targets = [stream_target(fake_provider, kind, retries=2), stream_target(second_fake, kind, retries=0)]
    with pytest.raises(ProviderError) as failure:
        dispatch.complete_with_fallbacks(targets, STREAM_CALL, sleep=pytest.fail)
    assert failure.value.failure_class == FailureClass.MALFORMED
    assert failure.value.retryable is False
    assert (len(fake_provider.requests), len(second_fake.requests)) == (1, 0)


@KINDS
def test_stream_without_usage_reports_usage_unavailable(fake_provider, kind):
    fake_provider.script(Reply(text="no usage", include_usage=False))
    result = dispatch.complete_with_fallbacks([stream_target(fake_provider, kind, retries=0)], STREAM_CALL)
    usage = result.answer.usage
    assert result.answer.text == "no usage"
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (None, None, None)
    assert usage.provenance == Provenance.UNAVAILABLE


@KINDS
def test_server_error_on_a_stream_is_retried_then_walks_to_the_fallback(fake_provider, second_fake, kind):
    fake_provider.script(server_error(), server_error())
    second_fake.script("from the fallback")
    targets = [stream_target(fake_provider, kind, retries=1), stream_target(second_fake, kind, retries=0)]
    waited: list[float] = []
    result = dispatch.complete_with_fallbacks(targets, STREAM_CALL, sleep=waited.append)
    assert (result.served_index, result.answer.text) == (1, "from the fallback")
    assert [a.failure_class for a in result.attempts] == [
        FailureClass.SERVER_ERROR,
        FailureClass.SERVER_ERROR,
        None,
    ]
    assert (len(fake_provider.requests), len(second_fake.requests)) == (2, 1)
    assert waited == [0.5]
