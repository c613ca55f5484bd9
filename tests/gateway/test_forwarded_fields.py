"""Every request field that reaches a provider is a classified source or a bounded parameter: ``stop``
is caller input of the request's class and at most 4 sequences of 64 characters; ``user`` and ``metadata`` are
accepted and never forwarded."""

from __future__ import annotations

import pytest

from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"
PUBLIC_MESSAGE = {"role": "user", "content": "Hello", "data_class": DataClass.PUBLIC_CONTENT}


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)
    caller = make_caller(
        "configurations:use",
        configurations=(configuration,),
        default_input_data_class=DataClass.SECRET_ADJACENT,
    )
    return configuration, caller


def chat(caller, configuration, **fields):
    return caller.post(CHAT, {"model": configuration.identifier, "messages": [PUBLIC_MESSAGE], **fields})


def test_stop_sequences_are_caller_input_of_the_request_class_and_refused_like_it(setup, fake_provider):
    configuration, caller = setup

    response = chat(caller, configuration, stop=["STOP-HERE"])

    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("permission_error", "context_refused")
    refused = [s for s in error["governance"]["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["identifier"], s["data_class"]) for s in refused] == [
        ("caller_context", "stop", "secret_adjacent")
    ]
    assert fake_provider.requests == []
    assert CompletionRecord.objects.count() == 0
    assert list(GovernanceEvent.objects.values_list("source_identifier", flat=True)) == ["stop"]


def test_without_stop_the_same_request_is_sent(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(Reply(text="Fine."))

    assert chat(caller, configuration).status_code == 200
    assert "stop" not in fake_provider.bodies()[0]


def test_stop_sequences_of_a_permitted_class_are_sent(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(Reply(text="Fine."))

    response = caller.post(
        CHAT,
        {"model": configuration.identifier, "messages": [PUBLIC_MESSAGE], "stop": ["END", "x" * 64]},
        headers={"X-Data-Class": DataClass.PUBLIC_CONTENT},
    )

    assert response.status_code == 200, response.content
    assert fake_provider.bodies()[0]["stop"] == ["END", "x" * 64]
    sources = response.json()["governance"]["decision"]["sources"]
    assert [
        (s["identifier"], s["data_class"], s["outcome"]) for s in sources if s["identifier"] == "stop"
    ] == [("stop", "public_content", "allowed")]


@pytest.mark.parametrize(
    ("stop", "message"),
    [
        ("x" * 65, "stop: A stop sequence has at most 64 characters."),
        (["END", "y" * 5000], "stop: A stop sequence has at most 64 characters."),
        (["a", "b", "c", "d", "e"], "stop: At most 4 stop sequences."),
    ],
)
def test_stop_is_bounded(setup, fake_provider, stop, message):
    configuration, caller = setup

    response = chat(caller, configuration, stop=stop)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["param"], error["code"], error["message"]) == ("stop", "invalid_value", message)
    assert fake_provider.requests == []


def test_seed_is_bounded_to_a_64_bit_integer(setup, fake_provider):
    configuration, caller = setup

    response = chat(caller, configuration, seed=2**64)

    assert (response.status_code, response.json()["error"]["param"]) == (400, "seed")
    assert fake_provider.requests == []


def test_user_and_metadata_are_accepted_and_never_forwarded(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(Reply(text="Fine."))
    end_user = "alice@example.com"

    response = caller.post(
        CHAT,
        {
            "model": configuration.identifier,
            "messages": [PUBLIC_MESSAGE],
            "user": end_user,
            "metadata": {"k": "v"},
        },
        headers={"X-Data-Class": DataClass.PUBLIC_CONTENT},
    )

    assert response.status_code == 200, response.content
    assert "user" not in fake_provider.bodies()[0] and "metadata" not in fake_provider.bodies()[0]
    assert end_user not in fake_provider.wire_text()
