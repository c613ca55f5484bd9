"""The chat endpoint reads its configuration from the worker's cache under the catalogue token
(gateway/apis/context.py) and the client's limits from the row its authentication read: a switch, a
reclassification, a withdrawn permission or a lowered limit made between two requests applies to the
second one, with nothing sent."""

from __future__ import annotations

import pytest

from catalog.models import ApiClient, Configuration
from governance.models import GovernanceEvent
from governance.vocabulary import Decision, TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_EU, system_prompt="Configured prompt."
    )
    caller = make_caller("configurations:use", configurations=(configuration,))
    return configuration, caller


def chat(caller, configuration):
    return caller.post(
        CHAT, {"model": configuration.identifier, "messages": [{"role": "user", "content": "Hello."}]}
    )


def served_once(fake_provider, caller, configuration) -> None:
    """A first request that succeeds (and fills the worker's caches)."""
    fake_provider.script(Reply(text="First."))
    assert chat(caller, configuration).status_code == 200
    assert len(fake_provider.requests) == 1


def error_of(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    return response.json()["error"]


@pytest.mark.parametrize("switch", ["model", "provider"])
def test_a_switch_after_a_cached_read_applies_to_the_next_request(fake_provider, setup, switch):
    configuration, caller = setup
    served_once(fake_provider, caller, configuration)
    target = configuration.model if switch == "model" else configuration.model.provider
    type(target).objects.filter(pk=target.pk).update(is_active=False)

    error_of(chat(caller, configuration), 409, "model_inactive")

    assert len(fake_provider.requests) == 1


def test_a_reclassification_after_a_cached_read_applies_to_the_next_request(fake_provider, setup):
    configuration, caller = setup
    served_once(fake_provider, caller, configuration)
    Configuration.objects.filter(pk=configuration.pk).update(system_prompt_ceiling=TrustZone.LOCAL)

    error = error_of(chat(caller, configuration), 403, "context_refused")

    refused = [s["kind"] for s in error["governance"]["sources"] if s["outcome"] == "refused"]
    assert refused == ["system_prompt"]
    assert len(fake_provider.requests) == 1


def test_a_withdrawn_permission_applies_to_the_next_request(fake_provider, setup):
    configuration, caller = setup
    served_once(fake_provider, caller, configuration)
    caller.client.configurations.remove(configuration)

    error_of(chat(caller, configuration), 404, "model_not_found")

    assert len(fake_provider.requests) == 1


def test_a_deactivated_configuration_applies_to_the_next_request(fake_provider, setup):
    configuration, caller = setup
    served_once(fake_provider, caller, configuration)
    Configuration.objects.filter(pk=configuration.pk).update(is_active=False)

    assert chat(caller, configuration).status_code == 409

    assert len(fake_provider.requests) == 1


def test_a_limit_lowered_between_requests_applies_to_the_next_request(fake_provider, setup):
    configuration, caller = setup
    served_once(fake_provider, caller, configuration)
    ApiClient.objects.filter(pk=caller.client.pk).update(daily_token_limit=1)

    error_of(chat(caller, configuration), 429, "budget_exhausted")

    assert len(fake_provider.requests) == 1
    assert GovernanceEvent.objects.filter(decision=Decision.BUDGET_EXHAUSTED).count() == 1
