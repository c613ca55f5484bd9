"""Information flow across ``previous_response_id`` (docs/decisions/0018-reply-labels-and-receivers.md):
a stored reply keeps its label, and a continuation sends it as an ``assistant_turn`` source at that
label, so it never reaches a model or a receiver its label does not admit; and metrics move for a
response exactly as for a chat completion."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from catalog.models import ApiClient
from gateway.models import StoredResponse
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

RESPONSES = "/api/openai/v1/responses"


@pytest.fixture
def local(fake_provider):
    """A local configuration whose snippet is ``internal_configuration``: its replies carry that label."""
    snippet_make(
        identifier="runbook",
        text="Restart the queue workers before paging the on-call engineer.",
        tags=("ops",),
        data_class=DataClass.INTERNAL_CONFIGURATION,
        ceiling=TrustZone.EXTERNAL_EU,
    )
    return fake_configuration(
        fake_provider, zone=TrustZone.LOCAL, snippet_tags=["ops"], identifier="ops-local"
    )


@pytest.fixture
def external(fake_provider):
    """A configuration served by an ``external_global`` model, without snippets."""
    return fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, identifier="ops-global")


@pytest.fixture
def caller(make_caller, local, external):
    return make_caller(
        "configurations:use", configurations=(local, external), trust_zone=TrustZone.EXTERNAL_EU
    )


def first_response(caller, local, fake_provider) -> str:
    fake_provider.script(Reply(text="Restart the workers first."))
    response = caller.post(RESPONSES, {"model": local.identifier, "input": "What do I do first?"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["governance_receipt"]["label"] == "internal_configuration"
    stored = StoredResponse.objects.get(response_id=body["id"])
    assert (stored.label, stored.receiver_label) == ("internal_configuration", "internal_configuration")
    return body["id"]


def refused(response) -> list[tuple[str, str, str]]:
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "context_refused"
    return [
        (s["kind"], s["identifier"], s["data_class"])
        for s in error["governance"]["sources"]
        if s["outcome"] == "refused"
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_a_continuation_never_sends_the_earlier_reply_to_a_model_its_label_does_not_admit(
    caller, local, external, fake_provider, stream
):
    previous = first_response(caller, local, fake_provider)
    fake_provider.reset()

    response = caller.post(
        RESPONSES,
        {
            "model": external.identifier,
            "input": "And then?",
            "previous_response_id": previous,
            "stream": stream,
        },
    )

    assert refused(response) == [("assistant_turn", f"{previous}.output", "internal_configuration")]
    assert fake_provider.requests == []
    assert StoredResponse.objects.count() == 1


def test_a_continuation_applies_the_receiver_gate_to_the_earlier_reply(caller, local, fake_provider):
    previous = first_response(caller, local, fake_provider)
    fake_provider.reset()
    ApiClient.objects.filter(pk=caller.client.pk).update(trust_zone=TrustZone.EXTERNAL_GLOBAL)
    fake_provider.script(Reply(text="Never sent."))
    snippet_free = {"model": local.identifier, "input": "And then?", "previous_response_id": previous}
    local.snippet_tags = []
    local.save(update_fields=["snippet_tags"])

    response = caller.post(RESPONSES, snippet_free)

    assert refused(response) == [("assistant_turn", f"{previous}.output", "internal_configuration")]
    assert fake_provider.requests == []
    (event,) = GovernanceEvent.objects.filter(decision="context_blocked")
    assert (event.source_identifier, event.zone) == (f"{previous}.output", "external_global")


def test_a_response_moves_the_provider_and_token_metrics_by_exactly_its_own(caller, local, fake_provider):
    fake_provider.script(Reply(text="Done.", prompt_tokens=40, completion_tokens=7))
    labels = {"provider": local.model.provider.identifier, "model": local.model.model_id, "outcome": "ok"}

    def sample(name: str, **extra: str) -> float:
        return REGISTRY.get_sample_value(name, extra) or 0.0

    before = (
        sample("govctx_provider_calls_total", **labels),
        sample("govctx_tokens_total", model=local.model.model_id, type="prompt"),
        sample("govctx_tokens_total", model=local.model.model_id, type="completion"),
    )
    response = caller.post(RESPONSES, {"model": local.identifier, "input": "Hi."})
    after = (
        sample("govctx_provider_calls_total", **labels),
        sample("govctx_tokens_total", model=local.model.model_id, type="prompt"),
        sample("govctx_tokens_total", model=local.model.model_id, type="completion"),
    )

    assert response.status_code == 200, response.content
    assert response.json()["usage"]["input_tokens"] == 40
    assert tuple(a - b for a, b in zip(after, before, strict=True)) == (1, 40, 7)


@pytest.mark.parametrize(
    "around", [" {}", "{} ", "{}\n", "\t{}"], ids=["leading", "trailing", "newline", "tab"]
)
def test_a_previous_response_id_with_white_space_around_it_is_400_naming_the_field(
    caller, local, fake_provider, around
):
    first = first_response(caller, local, fake_provider)
    sent, stored = len(fake_provider.requests), StoredResponse.objects.count()

    response = caller.post(
        RESPONSES,
        {"model": local.identifier, "input": "And then?", "previous_response_id": around.format(first)},
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "invalid_request_error",
        "invalid_value",
        "previous_response_id",
    )
    assert error["message"] == (
        "previous_response_id: A response id is exact: letters, digits, '_' and '-' only, with nothing "
        "around it."
    )
    assert (len(fake_provider.requests), StoredResponse.objects.count()) == (sent, stored)
