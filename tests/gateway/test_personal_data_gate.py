"""Personal data found in a send classifies it (decisions 0032, 0039): a part declared
``public_content`` or ``editor_content`` that holds a value of any kind is sent at ``personal_data``,
so the one gate refuses it for ``external_global`` before anything is sent, serves it in
``external_eu`` with a receipt naming kinds and counts (never a value), routes it where the
configuration says so, and a pseudonymizing configuration sends placeholders and gives the caller its
values back. Values are generated at test time (tests/personal_data_corpus)."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from prometheus_client import REGISTRY

from agents.runtime.pseudonyms import PLACEHOLDER
from catalog.models import ProviderKind
from gateway.models import CompletionRecord
from governance.guardrails.personal_data import PersonalDataKind
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, PersonalDataOutcome, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import model_make, provider_make, snippet_make
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error
from tests.personal_data_corpus import labelled_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]

COMPLETIONS = "/api/v1/completions"
CHAT = "/api/openai/v1/chat/completions"
# One sentence per built-in kind, each holding one generated valid value.
SENTENCES = {item.kind: item for item in labelled_corpus(seed=39, per_kind=1)}
EMAIL = SENTENCES[PersonalDataKind.EMAIL]
CUSTOM = {"employee_id": "EMP-[0-9]{6}"}


def every_event_text() -> str:
    return json.dumps(list(GovernanceEvent.objects.values()), default=str)


@pytest.fixture
def global_caller(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["crm"])
    return configuration, make_caller("configurations:use", configurations=(configuration,))


@pytest.mark.parametrize("kind", list(SENTENCES))
def test_input_holding_any_kind_is_refused_for_external_global_with_nothing_sent(
    fake_provider, global_caller, kind
):
    configuration, caller = global_caller
    sentence = SENTENCES[kind]

    response = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": sentence.text})

    error = assert_error(response, 403, "context_refused")
    assert fake_provider.requests == []
    refused = [s for s in error["extra"]["decision"]["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["data_class"]) for s in refused] == [("task_input", "personal_data")]
    assert sentence.value not in response.content.decode()
    assert sentence.value not in every_event_text()
    assert CompletionRecord.objects.count() == 0


@override_settings(PERSONAL_DATA_PATTERNS=CUSTOM)
def test_an_operator_pattern_classifies_what_it_matches(fake_provider, global_caller):
    configuration, caller = global_caller
    text = "Escalate the ticket of EMP-204518 to the night shift."

    response = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": text})

    assert_error(response, 403, "context_refused")
    assert fake_provider.requests == []
    assert "EMP-204518" not in every_event_text()


def test_without_the_operator_pattern_the_same_text_is_sent(fake_provider, global_caller):
    configuration, caller = global_caller
    fake_provider.script(Reply(text="Done."))

    response = caller.post(
        COMPLETIONS,
        {"configuration": configuration.identifier, "input": "Escalate the ticket of EMP-204518."},
    )

    assert response.status_code == 200, response.content
    assert response.json()["governance_receipt"]["personal_data"]["sent"] == {}


@pytest.mark.parametrize("where", ["context", "snippet", "history"])
def test_personal_data_in_every_part_is_refused_for_external_global(fake_provider, global_caller, where):
    configuration, caller = global_caller
    if where == "snippet":
        snippet_make(
            identifier="crm-contact",
            text=f"Escalations: {EMAIL.text}",
            tags=("crm",),
            data_class=DataClass.EDITOR_CONTENT,
            ceiling=TrustZone.EXTERNAL_GLOBAL,
            personal_data_override=True,  # an editor kept the class over the finding
        )
        response = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": "Hello."})
    elif where == "context":
        item = {"name": "account", "text": EMAIL.text, "data_class": DataClass.PUBLIC_CONTENT}
        body = {"configuration": configuration.identifier, "input": "Hello.", "context": [item]}
        response = caller.post(COMPLETIONS, body)
    else:
        messages = [
            {"role": "user", "content": EMAIL.text},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Go on."},
        ]
        response = caller.post(CHAT, {"model": configuration.identifier, "messages": messages})

    assert response.status_code == 403, response.content
    assert fake_provider.requests == []
    assert EMAIL.value not in response.content.decode()
    assert EMAIL.value not in every_event_text()


def test_external_eu_is_served_with_a_receipt_naming_kinds_and_counts(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller(
        "configurations:use", configurations=(configuration,), trust_zone=TrustZone.EXTERNAL_EU
    )
    iban = SENTENCES[PersonalDataKind.IBAN]
    fake_provider.script(Reply(text="Booked."))

    body = caller.post(
        COMPLETIONS, {"configuration": configuration.identifier, "input": f"{EMAIL.text} {iban.text}"}
    ).json()

    receipt = body["governance_receipt"]
    assert receipt["personal_data"] == {
        "sent": {"email": 1, "iban": 1},
        "pseudonymized": {},
        "reply": {},
        "raised": [
            {
                "kind": "task_input",
                "identifier": "task_input",
                "declared_class": "public_content",
                "data_class": "personal_data",
                "found": {"email": 1, "iban": 1},
            }
        ],
    }
    assert receipt["label"] == "personal_data"
    assert EMAIL.value not in json.dumps(receipt) and iban.value not in json.dumps(receipt)
    assert EMAIL.value in json.dumps(fake_provider.requests[0].body)  # sent as it is: the zone admits it


def test_a_declared_stricter_class_is_kept(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.LOCAL)
    caller = make_caller("configurations:use", configurations=(configuration,), trust_zone=TrustZone.LOCAL)
    fake_provider.script(Reply(text="Noted."))
    item = {"name": "trace", "text": EMAIL.text, "data_class": DataClass.SYSTEM_DIAGNOSTICS}

    body = caller.post(
        COMPLETIONS, {"configuration": configuration.identifier, "input": "Hello.", "context": [item]}
    ).json()

    assert body["governance_receipt"]["personal_data"]["raised"] == []
    assert body["governance_receipt"]["personal_data"]["sent"] == {"email": 1}


def _trusted(fake_provider, configuration, outcome):
    provider = provider_make(
        identifier="on-prem",
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake_provider.openai_base_url,
        trust_zone=TrustZone.LOCAL,
        max_retries=0,
    )
    configuration.trusted_model = model_make(provider=provider, model_id="on-prem-8k")
    configuration.personal_data_outcome = outcome
    configuration.save()


def test_route_sends_personal_data_to_the_trusted_model(fake_provider, global_caller):
    configuration, caller = global_caller
    _trusted(fake_provider, configuration, PersonalDataOutcome.ROUTE)
    fake_provider.script(Reply(text="Done."))

    body = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": EMAIL.text}).json()

    assert body["model"] == "on-prem-8k"
    assert body["governance_receipt"]["routed_from"] == "external_global"
    assert [request.body["model"] for request in fake_provider.requests] == ["on-prem-8k"]


def test_refuse_keeps_personal_data_from_the_trusted_model_too(fake_provider, global_caller):
    configuration, caller = global_caller
    _trusted(fake_provider, configuration, PersonalDataOutcome.REFUSE)

    response = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": EMAIL.text})

    assert_error(response, 403, "context_refused")
    assert fake_provider.requests == []


def test_pseudonymize_sends_placeholders_and_gives_the_caller_its_values_back(fake_provider, global_caller):
    configuration, caller = global_caller
    configuration.personal_data_outcome = PersonalDataOutcome.PSEUDONYMIZE
    configuration.save()
    ssn = SENTENCES[PersonalDataKind.US_SSN]
    text = f"{EMAIL.text} {ssn.text} Again: {EMAIL.value}."
    fake_provider.script(Reply(text="Echo:", echo=True))

    body = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": text}).json()

    wire = json.dumps(fake_provider.requests[0].body)
    assert EMAIL.value not in wire and ssn.value not in wire
    placeholders = PLACEHOLDER.findall(wire)
    assert len(placeholders) == 3 and len(set(placeholders)) == 2  # the same value, the same placeholder
    assert text in body["text"]  # restored for the caller: its own input
    assert PLACEHOLDER.search(body["text"]) is None
    receipt = body["governance_receipt"]
    assert receipt["personal_data"]["pseudonymized"] == {"email": 2, "us_ssn": 1}
    assert receipt["personal_data"]["raised"] == []
    assert receipt["label"] == "public_content"  # sent at its declared class
    stored = (
        every_event_text()
        + json.dumps(receipt)
        + json.dumps(list(CompletionRecord.objects.values()), default=str)
    )
    assert EMAIL.value not in stored and ssn.value not in stored
    assert not any(p in stored for p in placeholders)


def test_pseudonymize_keeps_an_editors_values_from_a_receiver_below_personal_data(fake_provider, make_caller):
    snippet_make(
        identifier="crm-contact",
        text=f"Escalations: {EMAIL.text}",
        tags=("crm",),
        data_class=DataClass.EDITOR_CONTENT,
        ceiling=TrustZone.EXTERNAL_GLOBAL,
        personal_data_override=True,  # an editor kept the class over the finding
    )
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        snippet_tags=["crm"],
        personal_data_outcome=PersonalDataOutcome.PSEUDONYMIZE,
    )
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="Echo:", echo=True))

    body = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": "Hello."}).json()

    assert EMAIL.value not in json.dumps(fake_provider.requests[0].body)
    assert EMAIL.value not in body["text"]
    assert PLACEHOLDER.search(body["text"]) is not None  # the receiver may not read it: left as sent


def test_pseudonymize_restores_a_streamed_answer(fake_provider, global_caller):
    configuration, caller = global_caller
    configuration.personal_data_outcome = PersonalDataOutcome.PSEUDONYMIZE
    configuration.save()
    fake_provider.script(Reply(text="Echo:", echo=True))
    messages = [{"role": "user", "content": EMAIL.text}]

    response = caller.post(CHAT, {"model": configuration.identifier, "messages": messages, "stream": True})

    assert response.status_code == 200
    events = b"".join(response.streaming_content).decode()
    deltas = [
        json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
        for line in events.splitlines()
        if line.startswith("data: {") and json.loads(line[6:])["choices"]
    ]
    assert EMAIL.text in "".join(deltas)
    assert PLACEHOLDER.search("".join(deltas)) is None
    assert EMAIL.value not in json.dumps(fake_provider.requests[0].body)


def test_a_reply_holding_personal_data_takes_the_class(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller(
        "configurations:use", configurations=(configuration,), trust_zone=TrustZone.EXTERNAL_EU
    )
    fake_provider.script(Reply(text=f"Write to {EMAIL.value} for help."))

    body = caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": "Who helps?"}).json()

    receipt = body["governance_receipt"]
    assert receipt["personal_data"]["reply"] == {"email": 1}
    assert receipt["personal_data"]["sent"] == {}
    assert (receipt["label"], receipt["receiver_label"]) == ("personal_data", "personal_data")


def test_each_screening_action_is_an_event_and_a_metric_without_values(fake_provider, global_caller):
    def counted(action: str) -> float:
        labels = {"screener": "personal_data", "action": action, "kind": "email"}
        return REGISTRY.get_sample_value("govctx_screening_actions_total", labels) or 0.0

    configuration, caller = global_caller
    configuration.personal_data_outcome = PersonalDataOutcome.PSEUDONYMIZE
    configuration.save()
    fake_provider.script(Reply(text="Done."))
    before = counted("pseudonymize")

    caller.post(COMPLETIONS, {"configuration": configuration.identifier, "input": EMAIL.text})

    assert counted("pseudonymize") - before == 1.0
    events = list(GovernanceEvent.objects.filter(decision="pseudonymized").values_list("reason", "zone"))
    assert events == [("1 x email (pseudonymize)", "external_global")]
    assert EMAIL.value not in every_event_text()
