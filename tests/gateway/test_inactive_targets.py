"""Switches are honoured: a switched-off provider or model is never called, as primary or fallback."""

from __future__ import annotations

import pytest

from agents.models import AgentRun, AgentStep
from catalog.models import ConfigurationFallback, LlmModel, Provider, ProviderKind
from governance.models import GovernanceEvent
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import model_make, provider_make
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/context/preview"
COMPLETIONS = "/api/v1/completions"


def with_fallback(fake_provider, *, zone: str = TrustZone.LOCAL):
    """A configuration on the fake whose model ``gpt-4o`` has one fallback ``gpt-4o-mini`` at the same
    fake, served by a provider row of its own (so either provider can be switched off)."""
    configuration = fake_configuration(fake_provider, zone=zone)
    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake_provider.openai_base_url,
        trust_zone=zone,
        timeout_seconds=5,
        max_retries=0,
    )
    fallback = model_make(provider=provider, model_id="gpt-4o-mini")
    ConfigurationFallback.objects.create(configuration=configuration, model=fallback, position=0)
    return configuration, fallback


def sent_models(fake_provider) -> list[str]:
    return [request.body["model"] for request in fake_provider.requests]


def body(configuration) -> dict[str, str]:
    return {"configuration": configuration.identifier, "input": "Summarise the launch."}


@pytest.mark.parametrize("switch", ["model", "provider"])
def test_a_switched_off_primary_is_skipped_and_the_fallback_serves(fake_provider, make_caller, switch):
    configuration, _ = with_fallback(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    target = configuration.model if switch == "model" else configuration.model.provider
    type(target).objects.filter(pk=target.pk).update(is_active=False)
    fake_provider.script(Reply(text="From the fallback."))

    response = caller.post(COMPLETIONS, body(configuration))

    assert response.status_code == 200, response.content
    assert response.json()["model"] == "gpt-4o-mini"
    assert sent_models(fake_provider) == ["gpt-4o-mini"]


def test_a_switched_off_fallback_is_never_called_when_the_primary_fails(fake_provider, make_caller):
    configuration, fallback = with_fallback(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    LlmModel.objects.filter(pk=fallback.pk).update(is_active=False)
    fake_provider.script(Reply.failing(500, "Upstream broke."))

    response = caller.post(COMPLETIONS, body(configuration))

    assert_error(response, 502, "provider_error")
    assert sent_models(fake_provider) == ["gpt-4o"]


def test_no_active_target_is_409_model_inactive_with_an_event_and_nothing_sent(fake_provider, make_caller):
    configuration, fallback = with_fallback(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    LlmModel.objects.filter(pk=configuration.model.pk).update(is_active=False)
    Provider.objects.filter(pk=fallback.provider.pk).update(is_active=False)

    response = caller.post(COMPLETIONS, body(configuration))

    error = assert_error(response, 409, "model_inactive")
    assert sorted(error["extra"]["inactive"]) == sorted([str(configuration.model), str(fallback)])
    assert fake_provider.requests == []
    events = list(GovernanceEvent.objects.values_list("decision", "outcome", "configuration"))
    assert events == [("model_inactive", "enforced", configuration.identifier)]
    assert AgentRun.objects.count() == 0


def test_the_preview_answers_409_when_nothing_could_be_sent_and_records_nothing(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    Provider.objects.filter(pk=configuration.model.provider.pk).update(is_active=False)

    response = caller.post(PREVIEW, body(configuration))

    assert_error(response, 409, "model_inactive")
    assert (fake_provider.requests, GovernanceEvent.objects.count()) == ([], 0)


def test_a_run_whose_targets_are_switched_off_fails_with_model_inactive(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider)
    LlmModel.objects.filter(pk=configuration.model.pk).update(is_active=False)

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason, run.error_code) == (
        "failed",
        "provider_failed",
        "model_inactive",
    )
    assert list(AgentStep.objects.filter(run=run).values_list("status", "error_code")) == [
        ("failed", "model_inactive")
    ]
    assert fake_provider.requests == []
    assert list(GovernanceEvent.objects.values_list("decision", flat=True)) == ["model_inactive"]


def test_switching_off_between_two_sends_applies_at_the_next_send(fake_provider, make_caller):
    """The per-worker catalogue cache must not keep a switched-off target callable."""
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="First."))
    assert caller.post(COMPLETIONS, body(configuration)).status_code == 200

    model = LlmModel.objects.get(pk=configuration.model.pk)
    model.is_active = False
    model.save()
    response = caller.post(COMPLETIONS, body(configuration))

    assert_error(response, 409, "model_inactive")
    assert sent_models(fake_provider) == ["gpt-4o"]
