"""``/api/openai/v1/embeddings`` driven by the official ``openai`` SDK against a live server whose
embedding model is served by the loopback fake provider: every input form, both encodings, the
secrets redacted on the wire (in texts and in token arrays), budgets, the ledger and the receipt; a
refused input, a chat model and a too-long ``dimensions`` send nothing.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

from decimal import Decimal

import openai
import pytest
from django.test import Client

from agents.models import ClientDailyUsage
from catalog.models import LlmModel
from catalog.services import api_client_create
from context_assembly.encodings import get_encoding
from editors.demo import DEMO_EMBEDDINGS_CONFIGURATION, demo_seed
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import fake_vector
from tests.gateway.test_metrics import Delta, scrape

pytestmark = pytest.mark.django_db(transaction=True)

GITHUB = {canary.kind: canary for canary in generate_canaries(seed=20261206)}["github_classic_pat"]
O200K = get_encoding("o200k_base")


def served(fake_provider, *, embeds: bool = True, **model_fields):
    """An embedding configuration in ``external_eu`` served by the fake, and a client that may use it."""
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        identifier="search-index",
        model_embeds=embeds,
        model_input_price_per_million=Decimal("0.02"),
        **model_fields,
    )
    issued = api_client_create(
        name="indexer",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return configuration, issued


def fake_provider_identifier() -> str:
    return (
        CompletionRecord._meta.get_field("model")
        .related_model.objects.get(model_id="gpt-4o")
        .provider.identifier
    )


def sdk(live_server, token: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20
    )


@pytest.mark.parametrize(
    ("sent", "on_wire"),
    [
        ("Atlas release notes", ["Atlas release notes"]),
        (["first text", "second text"], ["first text", "second text"]),
        (O200K.encode_ordinary("hello world"), [O200K.encode_ordinary("hello world")]),
        ([[1, 2, 3], O200K.encode_ordinary("second")], [[1, 2, 3], O200K.encode_ordinary("second")]),
    ],
    ids=["string", "list of strings", "token array", "token arrays"],
)
# Without encoding_format the SDK asks for base64 and decodes the float32 bytes itself.
@pytest.mark.parametrize("encoding", [{}, {"encoding_format": "float"}], ids=["base64", "float"])
def test_the_openai_sdk_gets_governed_embeddings_for_every_input_form(
    live_server, fake_provider, sent, on_wire, encoding
):
    _, issued = served(fake_provider)

    answer = sdk(live_server, issued.token).embeddings.create(model="search-index", input=sent, **encoding)

    (request,) = fake_provider.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "gpt-4o", "input": on_wire, "encoding_format": "float"}
    assert [item.index for item in answer.data] == list(range(len(on_wire)))
    for item, wire_input in zip(answer.data, on_wire, strict=True):
        assert item.embedding == pytest.approx(fake_vector(wire_input, 8), rel=1e-6)
    tokens = sum(len(i) if isinstance(i, list) else len(O200K.encode_ordinary(i)) for i in on_wire)
    assert (answer.usage.prompt_tokens, answer.usage.total_tokens) == (tokens, tokens)
    assert answer.model == "search-index"
    receipt = answer.model_extra["governance_receipt"]
    assert (receipt["zone"], receipt["receiver_zone"], receipt["label"]) == (
        "external_eu",
        "external_global",
        "public_content",
    )
    names = ["input"] if len(on_wire) == 1 else [f"input[{i}]" for i in range(len(on_wire))]
    assert receipt["sources"] == [
        {
            "kind": "task_input",
            "data_class": "public_content",
            "outcome": "allowed",
            "pinned_version": None,
            "identifiers": names,
        }
    ]
    record = CompletionRecord.objects.get(request_id=answer.model_extra["governance"]["request_id"])
    assert (record.prompt_tokens, record.completion_tokens) == (tokens, 0)
    assert record.cost == Decimal("0.02") * tokens / 1_000_000
    usage = ClientDailyUsage.objects.get(client=issued.client)
    assert (usage.tokens_used, usage.tokens_reserved) == (tokens, 0)


def test_a_secret_is_redacted_from_a_text_and_from_a_token_array_before_the_wire(live_server, fake_provider):
    _, issued = served(fake_provider)
    text = f"deploy key {GITHUB.value}"
    before = scrape()

    answer = sdk(live_server, issued.token).embeddings.create(
        model="search-index", input=[text, O200K.encode_ordinary(text)], encoding_format="float"
    )

    delta = Delta(before, scrape())
    provider = LlmModel.objects.get(model_id="gpt-4o").provider.identifier
    assert delta("govctx_provider_calls_total", provider=provider, model="gpt-4o", outcome="ok") == 1
    assert delta("govctx_tokens_total", model="gpt-4o", type="prompt") == answer.usage.prompt_tokens

    (request,) = fake_provider.requests
    redacted = "deploy key [REDACTED:github_token]"
    assert request.body["input"] == [redacted, O200K.encode_ordinary(redacted)]
    assert all(fragment not in fake_provider.wire_text() for fragment in GITHUB.fragments())
    assert answer.model_extra["governance"]["redactions"] == {"sent": {"github_token": 2}}
    assert GovernanceEvent.objects.filter(decision="secret_redacted", reason="2 x github_token").count() == 1


def test_an_input_above_the_zone_is_refused_and_nothing_is_sent_or_charged(live_server, fake_provider):
    _, issued = served(fake_provider)
    client = openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1",
        api_key=issued.token,
        max_retries=0,
        default_headers={"X-Data-Class": DataClass.SECRET_ADJACENT},
    )

    with pytest.raises(openai.PermissionDeniedError) as refused:
        client.embeddings.create(model="search-index", input=["vault layout", "rotation runbook"])

    error = refused.value.body
    assert error["code"] == "context_refused"
    assert error["message"].startswith("task_input 'input[0]' may not be sent to zone external_eu")
    assert fake_provider.requests == []
    assert CompletionRecord.objects.count() == 0
    assert not ClientDailyUsage.objects.filter(client=issued.client, tokens_used__gt=0).exists()
    blocked = GovernanceEvent.objects.filter(decision="context_blocked", outcome="enforced")
    assert sorted(blocked.values_list("source_identifier", flat=True)) == ["input[0]", "input[1]"]


def test_a_chat_model_is_not_asked_for_embeddings(live_server, fake_provider):
    _, issued = served(fake_provider, embeds=False)

    with pytest.raises(openai.BadRequestError) as refused:
        sdk(live_server, issued.token).embeddings.create(model="search-index", input="hello")

    assert refused.value.body["code"] == "modality_unsupported"
    assert "does not answer embeddings" in refused.value.body["message"]
    assert fake_provider.requests == []


def test_dimensions_are_forwarded_and_held_to_the_models_vectors(live_server, fake_provider):
    _, issued = served(fake_provider, model_embedding_dimensions=16)
    client = sdk(live_server, issued.token)

    answer = client.embeddings.create(
        model="search-index", input="hello", dimensions=4, encoding_format="float"
    )
    with pytest.raises(openai.BadRequestError) as refused:
        client.embeddings.create(model="search-index", input="hello", dimensions=17)

    assert len(answer.data[0].embedding) == 4
    assert [request.body.get("dimensions") for request in fake_provider.requests] == [4]
    assert refused.value.body["param"] == "dimensions"


def test_an_exhausted_budget_sends_nothing(live_server, fake_provider):
    _, issued = served(fake_provider)
    issued.client.daily_token_limit = 2
    issued.client.save()

    with pytest.raises(openai.RateLimitError) as refused:
        sdk(live_server, issued.token).embeddings.create(
            model="search-index", input="a sentence of several tokens"
        )

    assert refused.value.body["code"] == "budget_exhausted"
    assert fake_provider.requests == []


def test_a_token_array_for_a_model_without_a_known_tokenizer_is_not_sent_unscreened(
    live_server, fake_provider
):
    _, issued = served(fake_provider, model_tokenizer="approximate")

    with pytest.raises(openai.BadRequestError) as refused:
        sdk(live_server, issued.token).embeddings.create(model="search-index", input=["text", [1, 2, 3]])

    assert refused.value.body["param"] == "input[1]"
    assert "cannot be screened" in refused.value.body["message"]
    assert fake_provider.requests == []


def test_the_offline_demo_answers_embeddings_without_any_key():
    token = demo_seed().api_token
    response = Client().post(
        "/api/openai/v1/embeddings",
        {"model": DEMO_EMBEDDINGS_CONFIGURATION, "input": ["hello", "hello"], "dimensions": 8},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )

    assert response.status_code == 200, response.content
    first, second = (item["embedding"] for item in response.json()["data"])
    assert first == second and len(first) == 8
    assert response.json()["governance"]["served_model"] == "local-embed"
