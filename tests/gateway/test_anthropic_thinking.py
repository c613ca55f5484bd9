"""Extended thinking through ``/api/anthropic``, driven by the official ``anthropic`` SDK against a live
server whose configuration is served by an Anthropic-kind model on the loopback fake: asked for with a
budget, it reaches a model whose catalogue declares ``thinking``; its blocks come back (whole and
streamed) with their signatures, redacted like reply text; they are given back unchanged on the next
turn; a model that does not declare it refuses the request before anything is sent.

Canary secrets are drawn at test time (tests/canaries.py); none is written in this file.
"""

from __future__ import annotations

import anthropic
import pytest

from catalog.models import ProviderKind
from catalog.services import api_client_create
from governance.vocabulary import DataClass, TrustZone
from tests.canaries import generate_canaries
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import Reply, count_text_tokens

pytestmark = pytest.mark.django_db(transaction=True)

GITHUB = {canary.kind: canary for canary in generate_canaries(seed=20261207)}["github_classic_pat"]
MODEL = "claude-thinking-test"
THOUGHT = "The user wants one sentence. Search got faster; that is the headline."
SIGNATURE = "sig-" + "Q" * 40
ANSWER = "Atlas 2.1 ships faster search."
THINKING = {"type": "enabled", "budget_tokens": 2048}


def served(fake_provider, *, thinking: bool):
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
        max_retries=0,
    )
    model = model_make(provider=provider, model_id=MODEL, tokenizer="approximate", thinking=thinking)
    configuration = configuration_make(model=model, identifier="release-notes")
    issued = api_client_create(
        name="thinking-app",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return anthropic.Anthropic(api_key=issued.token, max_retries=0, timeout=20)


@pytest.fixture
def client(live_server, fake_provider):
    sdk = served(fake_provider, thinking=True)
    return sdk.with_options(base_url=f"{live_server.url}/api/anthropic")


def ask(client, **extra):
    return client.messages.create(
        model="release-notes",
        max_tokens=4096,
        thinking=THINKING,
        messages=[{"role": "user", "content": "Summarise the release."}],
        **extra,
    )


def test_thinking_is_asked_for_and_its_blocks_come_back_with_their_signature(client, fake_provider):
    fake_provider.script(Reply(text=ANSWER, thinking=((THOUGHT, SIGNATURE),)))

    message = ask(client)

    sent = fake_provider.bodies()[0]
    assert sent["thinking"] == THINKING
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert (message.content[0].thinking, message.content[0].signature) == (THOUGHT, SIGNATURE)
    assert message.content[1].text == ANSWER
    assert message.usage.output_tokens == count_text_tokens(ANSWER) + count_text_tokens(THOUGHT)


def test_a_streamed_reply_hands_on_thinking_and_signature_deltas(client, fake_provider):
    fake_provider.script(Reply(text=ANSWER, thinking=((THOUGHT, SIGNATURE),)))

    with client.messages.stream(
        model="release-notes",
        max_tokens=4096,
        thinking=THINKING,
        messages=[{"role": "user", "content": "Summarise the release."}],
    ) as stream:
        kinds = [event.delta.type for event in stream if event.type == "content_block_delta"]
        message = stream.get_final_message()

    assert kinds.count("signature_delta") == 1 and kinds.index("signature_delta") < kinds.index("text_delta")
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert (message.content[0].thinking, message.content[0].signature) == (THOUGHT, SIGNATURE)
    assert message.content[1].text == ANSWER
    assert fake_provider.bodies()[0]["thinking"] == THINKING


def test_thinking_blocks_given_back_go_to_the_provider_unchanged(client, fake_provider):
    fake_provider.script(Reply(text="Also: a new importer."))
    previous = [
        {"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": "opaque-" + "Z" * 20},
        {"type": "text", "text": ANSWER},
    ]

    client.messages.create(
        model="release-notes",
        max_tokens=4096,
        thinking=THINKING,
        messages=[
            {"role": "user", "content": "Summarise the release."},
            {"role": "assistant", "content": previous},
            {"role": "user", "content": "Anything else?"},
        ],
    )

    wire = fake_provider.bodies()[0]["messages"]
    assistant = next(message for message in wire if message["role"] == "assistant")
    assert assistant["content"] == previous


def test_thinking_that_holds_a_secret_is_redacted_and_loses_its_signature(client, fake_provider):
    thought = f"The key in the notes is {GITHUB.value}; never repeat it."
    fake_provider.script(
        Reply(text=ANSWER, thinking=((thought, SIGNATURE),)),
        Reply(text=ANSWER, thinking=((thought, SIGNATURE),)),
        Reply(text="Noted."),
    )

    whole = ask(client)
    with client.messages.stream(
        model="release-notes",
        max_tokens=4096,
        thinking=THINKING,
        messages=[{"role": "user", "content": "Summarise the release."}],
    ) as stream:
        streamed = stream.get_final_message()
    # Given back as received: a block without its signature cannot be proved, so it is not sent on.
    client.messages.create(
        model="release-notes",
        max_tokens=4096,
        thinking=THINKING,
        messages=[
            {"role": "user", "content": "Summarise the release."},
            {"role": "assistant", "content": [block.model_dump() for block in whole.content]},
            {"role": "user", "content": "Thanks."},
        ],
    )

    for message in (whole, streamed):
        block = message.content[0]
        assert GITHUB.value not in block.thinking and "[REDACTED:github_token]" in block.thinking
        assert block.signature == ""
    assert whole.model_extra["governance"]["redactions"]["reply"] == {"github_token": 1}
    assistant = next(m for m in fake_provider.bodies()[2]["messages"] if m["role"] == "assistant")
    assert [block["type"] for block in assistant["content"]] == ["text"]
    assert GITHUB.value not in fake_provider.wire_text()


def test_a_model_without_thinking_refuses_it_naming_both_and_sends_nothing(live_server, fake_provider):
    client = served(fake_provider, thinking=False).with_options(base_url=f"{live_server.url}/api/anthropic")

    with pytest.raises(anthropic.BadRequestError) as refused:
        ask(client)

    error = refused.value.body["error"]
    assert error["param"] == "thinking"
    assert "thinking" in error["message"] and MODEL in error["message"]
    assert fake_provider.requests == []


def test_adaptive_thinking_asks_for_nothing_on_a_model_without_it(live_server, fake_provider):
    client = served(fake_provider, thinking=False).with_options(base_url=f"{live_server.url}/api/anthropic")
    fake_provider.script(Reply(text=ANSWER))

    message = client.messages.create(
        model="release-notes",
        max_tokens=1024,
        thinking={"type": "adaptive"},
        messages=[{"role": "user", "content": "Summarise the release."}],
    )

    assert message.content[0].text == ANSWER
    assert "thinking" not in fake_provider.bodies()[0]


def test_sampling_beside_thinking_is_a_400_naming_it(client, fake_provider):
    with pytest.raises(anthropic.BadRequestError) as refused:
        ask(client, extra_body={"temperature": 0.5})  # the SDK dropped the keyword

    assert refused.value.body["error"]["param"] == "temperature"
    assert fake_provider.requests == []
