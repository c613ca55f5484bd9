"""The text of a caller's PDF is screened for personal data as any text part is (decision 0039): a PDF
holding an e-mail address and an IBAN, sent to ``external_global``, is refused before anything is
sent, routed to the trusted model where the configuration routes, and, where it pseudonymizes, sent
as its text with placeholders (never as its bytes, which hold the values), the caller's answer
carrying the values back. In ``external_eu`` the document goes as its bytes, raised to
``personal_data``. The PDF is built at test time (tests/media_files.py), its values generated
(tests/personal_data_corpus)."""

from __future__ import annotations

import base64
import json

import pytest

from agents.runtime.pseudonyms import PLACEHOLDER
from catalog.models import ProviderKind
from gateway.models import CompletionRecord
from governance.guardrails.personal_data import PersonalDataKind
from governance.models import GovernanceEvent
from governance.vocabulary import PersonalDataOutcome, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import model_make, provider_make
from tests.fakes.provider_server import Reply
from tests.media_files import data_url, pdf
from tests.personal_data_corpus import labelled_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]

CHAT = "/api/openai/v1/chat/completions"
FOUND = {item.kind: item for item in labelled_corpus(seed=46, per_kind=1)}
EMAIL, IBAN = FOUND[PersonalDataKind.EMAIL], FOUND[PersonalDataKind.IBAN]
DOCUMENT = pdf(f"Contact: {EMAIL.value}", f"Refunds to {IBAN.value}")
VALUES = (EMAIL.value, IBAN.value)


def body(model: str) -> dict:
    part = {
        "type": "file",
        "file": {"filename": "refund.pdf", "file_data": data_url(DOCUMENT, "application/pdf")},
    }
    content = [{"type": "text", "text": "Summarise the attached request."}, part]
    return {"model": model, "messages": [{"role": "user", "content": content}]}


def caller_for(fake_provider, make_caller, zone: str, **fields):
    configuration = fake_configuration(fake_provider, zone=zone, identifier="refunds", **fields)
    return make_caller("configurations:use", configurations=(configuration,), trust_zone=zone)


def kept_text() -> str:
    return json.dumps(
        [list(GovernanceEvent.objects.values()), list(CompletionRecord.objects.values())], default=str
    )


def media_source(response) -> dict:
    (source,) = [
        s
        for s in response.json()["governance"]["decision"]["sources"]
        if s["identifier"] == "messages[0].content[1]"
    ]
    return source


def test_the_extracted_text_holds_both_values():
    from context_assembly.media import pdf_facts

    text = pdf_facts(DOCUMENT, "file").text
    assert EMAIL.value in text and IBAN.value in text


def test_a_pdf_with_personal_data_is_refused_for_external_global_and_nothing_is_sent(
    fake_provider, make_caller
):
    caller = caller_for(fake_provider, make_caller, TrustZone.EXTERNAL_GLOBAL)

    response = caller.post(CHAT, body("refunds"))

    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "context_refused"
    refused = [s for s in error["governance"]["sources"] if s["outcome"] == "refused"]
    assert [(s["identifier"], s["data_class"]) for s in refused] == [
        ("messages[0].content[1]", "personal_data")
    ]
    assert fake_provider.requests == []
    assert not any(value in response.content.decode() for value in VALUES)
    assert not any(value in kept_text() for value in VALUES)


def test_route_sends_the_pdf_to_the_trusted_model(fake_provider, make_caller):
    caller = caller_for(fake_provider, make_caller, TrustZone.EXTERNAL_GLOBAL)
    provider = provider_make(
        identifier="on-prem",
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake_provider.openai_base_url,
        trust_zone=TrustZone.LOCAL,
        max_retries=0,
    )
    configuration = caller.client.configurations.get()
    configuration.trusted_model = model_make(
        provider=provider, model_id="on-prem-8k", input_modalities=["pdf"]
    )
    configuration.personal_data_outcome = PersonalDataOutcome.ROUTE
    configuration.save()
    fake_provider.script(Reply(text="A refund request."))

    response = caller.post(CHAT, body("refunds"))

    assert response.status_code == 200, response.content
    assert [request.body["model"] for request in fake_provider.requests] == ["on-prem-8k"]
    sent = fake_provider.requests[0].body["messages"][-1]["content"][1]
    assert sent["type"] == "file"  # the trusted model reads the document itself


def test_pseudonymize_sends_the_text_with_placeholders_and_restores_the_answer(fake_provider, make_caller):
    caller = caller_for(
        fake_provider,
        make_caller,
        TrustZone.EXTERNAL_GLOBAL,
        personal_data_outcome=PersonalDataOutcome.PSEUDONYMIZE,
    )
    fake_provider.script(Reply(text="You sent:", echo=True))

    response = caller.post(CHAT, body("refunds"))

    assert response.status_code == 200, response.content
    (request,) = fake_provider.requests
    wire = json.dumps(request.body)
    assert not any(value in wire for value in VALUES)
    assert base64.b64encode(DOCUMENT).decode() not in fake_provider.wire_text()
    sent = request.body["messages"][-1]["content"][1]
    assert sent["type"] == "text"
    assert sent["text"].startswith('Document "refund.pdf" (its text; personal data as placeholders):\n')
    assert len(set(PLACEHOLDER.findall(sent["text"]))) == 2
    answer = response.json()["choices"][0]["message"]["content"]
    assert EMAIL.value in answer and IBAN.value in answer and PLACEHOLDER.search(answer) is None
    receipt = response.json()["governance_receipt"]
    assert receipt["personal_data"]["pseudonymized"] == {"email": 1, "iban": 1}
    assert media_source(response)["data_class"] == "public_content"
    placeholders = set(PLACEHOLDER.findall(wire))
    assert not any(value in kept_text() for value in VALUES)
    assert not any(placeholder in kept_text() for placeholder in placeholders)


def test_external_eu_sends_the_pdf_raised_to_personal_data(fake_provider, make_caller):
    caller = caller_for(fake_provider, make_caller, TrustZone.EXTERNAL_EU)
    fake_provider.script(Reply(text="A refund request."))

    response = caller.post(CHAT, body("refunds"))

    assert response.status_code == 200, response.content
    sent = fake_provider.requests[0].body["messages"][-1]["content"][1]
    assert sent["type"] == "file"
    assert response.json()["governance_receipt"]["personal_data"]["sent"] == {"email": 1, "iban": 1}
    assert response.json()["governance"]["decision"]["label"] == "personal_data"
    assert media_source(response)["data_class"] == "personal_data"


def later_turn(model: str) -> dict:
    """The PDF in a later user turn: a transcript message, not the task input."""
    first = {"role": "user", "content": "I will send a refund request."}
    return {
        "model": model,
        "messages": [first, {"role": "assistant", "content": "Send it."}, *body(model)["messages"]],
    }


def test_a_pdf_in_a_later_turn_is_refused_for_external_global(fake_provider, make_caller):
    caller = caller_for(fake_provider, make_caller, TrustZone.EXTERNAL_GLOBAL)

    response = caller.post(CHAT, later_turn("refunds"))

    assert response.status_code == 403, response.content
    refused = {
        s["identifier"]
        for s in response.json()["error"]["governance"]["sources"]
        if s["outcome"] == "refused"
    }
    assert "messages[2].content[1]" in refused
    assert fake_provider.requests == []


def test_a_pdf_in_a_later_turn_is_pseudonymized_and_restored(fake_provider, make_caller):
    caller = caller_for(
        fake_provider,
        make_caller,
        TrustZone.EXTERNAL_GLOBAL,
        personal_data_outcome=PersonalDataOutcome.PSEUDONYMIZE,
    )
    fake_provider.script(Reply(text="You sent:", echo=True))

    response = caller.post(CHAT, later_turn("refunds"))

    assert response.status_code == 200, response.content
    wire = json.dumps(fake_provider.requests[0].body)
    assert not any(value in wire for value in VALUES)
    assert len(set(PLACEHOLDER.findall(wire))) == 2
    answer = response.json()["choices"][0]["message"]["content"]
    assert EMAIL.value in answer and IBAN.value in answer and PLACEHOLDER.search(answer) is None
