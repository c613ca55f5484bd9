"""The official ``openai`` SDK and LangChain's ``ChatOpenAI``, whole and streamed, against a live server whose configuration
pseudonymizes personal data for an ``external_global`` provider: the provider's recorder holds only
placeholders, and the client gets its own values back in the answer, unchanged client code. Values are
generated at test time (tests/personal_data_corpus)."""

from __future__ import annotations

import json
import logging

import openai
import pytest

from agents.runtime.pseudonyms import PLACEHOLDER
from catalog.services import api_client_create
from gateway.models import CompletionRecord
from governance.guardrails.personal_data import PersonalDataKind
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, PersonalDataOutcome, TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.personal_data_corpus import labelled_corpus

pytestmark = pytest.mark.django_db(transaction=True)

SENTENCES = {item.kind: item for item in labelled_corpus(seed=41, per_kind=1)}
PROMPT = " ".join(SENTENCES[kind].text for kind in (PersonalDataKind.EMAIL, PersonalDataKind.PAYMENT_CARD))
VALUES = [SENTENCES[kind].value for kind in (PersonalDataKind.EMAIL, PersonalDataKind.PAYMENT_CARD)]


@pytest.fixture
def client(live_server, fake_provider):
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_GLOBAL,
        identifier="crm-assistant",
        personal_data_outcome=PersonalDataOutcome.PSEUDONYMIZE,
    )
    issued = api_client_create(
        name="crm-app",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return openai.OpenAI(base_url=f"{live_server.url}/api/openai/v1", api_key=issued.token, max_retries=0)


@pytest.fixture
def chat_model(client):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="crm-assistant",
        base_url=str(client.base_url),
        api_key=client.api_key,
        max_retries=0,
        timeout=20,
    )


def assert_nothing_kept(fake_provider, caplog) -> None:
    wire = json.dumps([request.body for request in fake_provider.requests])
    assert not any(value in wire for value in VALUES)
    placeholders = set(PLACEHOLDER.findall(wire))
    assert len(placeholders) == 2
    kept = json.dumps(
        [list(GovernanceEvent.objects.values()), list(CompletionRecord.objects.values())], default=str
    )
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for text in (kept, logged):
        assert not any(value in text for value in VALUES)
        assert not any(placeholder in text for placeholder in placeholders)


def test_the_openai_sdk_gets_its_values_back_whole(client, fake_provider, caplog):
    caplog.set_level(logging.DEBUG)
    fake_provider.script(Reply(text="You wrote:", echo=True))

    completion = client.chat.completions.create(
        model="crm-assistant", messages=[{"role": "user", "content": PROMPT}]
    )

    answer = completion.choices[0].message.content
    assert PROMPT in answer and PLACEHOLDER.search(answer) is None
    assert_nothing_kept(fake_provider, caplog)


def test_the_openai_sdk_gets_its_values_back_streamed(client, fake_provider, caplog):
    caplog.set_level(logging.DEBUG)
    fake_provider.script(Reply(text="You wrote:", echo=True))

    stream = client.chat.completions.create(
        model="crm-assistant", messages=[{"role": "user", "content": PROMPT}], stream=True
    )
    answer = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)

    assert PROMPT in answer and PLACEHOLDER.search(answer) is None
    assert_nothing_kept(fake_provider, caplog)


def test_langchain_gets_its_values_back_whole(chat_model, fake_provider, caplog):
    from langchain_core.messages import HumanMessage

    caplog.set_level(logging.DEBUG)
    fake_provider.script(Reply(text="You wrote:", echo=True))

    reply = chat_model.invoke([HumanMessage(PROMPT)])

    assert PROMPT in reply.content and PLACEHOLDER.search(reply.content) is None
    assert_nothing_kept(fake_provider, caplog)


def test_langchain_gets_its_values_back_streamed(chat_model, fake_provider, caplog):
    caplog.set_level(logging.DEBUG)
    fake_provider.script(Reply(text="You wrote:", echo=True))

    pieces = [piece.content for piece in chat_model.stream(PROMPT)]
    answer = "".join(pieces)

    assert len([piece for piece in pieces if piece]) > 1
    assert PROMPT in answer and PLACEHOLDER.search(answer) is None
    assert_nothing_kept(fake_provider, caplog)
