"""The ``openai`` and ``anthropic`` SDKs, unchanged, against uvicorn serving the production ASGI
application as ``make serve``'s web process does (``Procfile``: ``uvicorn config.asgi:application``;
the application built as ``tests/gateway/test_openai_asgi_app.py`` builds it, without the serving
process's background work). Under ASGI a call waits on its provider on the event loop, so this is the
path ``make serve`` takes, where ``live_server`` (WSGI) takes ``make run``'s: chat whole and streamed,
embeddings, an Anthropic message whole and streamed with extended thinking, and count_tokens, each
answered by the loopback fake provider.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from decimal import Decimal

import anthropic
import openai
import pytest
import uvicorn

from catalog.models import ProviderKind
from catalog.services import api_client_create
from gateway.models import CompletionRecord
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.mcp_servers import free_port
from tests.fakes.provider_server import Reply, fake_vector
from tests.gateway.test_openai_asgi_app import application

pytestmark = pytest.mark.django_db(transaction=True)

THOUGHT = "One sentence, warm and direct."
SIGNATURE = "sig-" + "K" * 32


@pytest.fixture
def served() -> Iterator[str]:
    """The base URL of uvicorn serving the application on a free loopback port."""
    port = free_port()
    config = uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.fixture
def token(fake_provider) -> str:
    chat = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, identifier="notes")
    embeddings = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        identifier="search-index",
        model_embeds=True,
        model_input_price_per_million=Decimal("0.02"),
    )
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.EXTERNAL_EU,
        max_retries=0,
    )
    model = model_make(
        provider=provider, model_id="claude-served-test", tokenizer="approximate", thinking=True
    )
    claude = configuration_make(model=model, identifier="claude-notes")
    return api_client_create(
        name="uvicorn-app",
        scopes=["configurations:use"],
        configurations=[chat, embeddings, claude],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    ).token


def test_the_openai_sdk_chats_streams_and_embeds_under_uvicorn(served, token, fake_provider):
    fake_provider.script(Reply(text="Warm and direct."), Reply(text="Short sentences."), Reply())
    client = openai.OpenAI(base_url=f"{served}/api/openai/v1", api_key=token, max_retries=0, timeout=20)
    messages = [{"role": "user", "content": "Describe our tone."}]

    whole = client.chat.completions.create(model="notes", messages=messages)
    streamed = client.chat.completions.create(model="notes", messages=messages, stream=True)
    pieces = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
    vectors = client.embeddings.create(model="search-index", input="Our tone of voice.", dimensions=3)

    assert whole.choices[0].message.content == "Warm and direct."
    assert pieces == "Short sentences."
    assert vectors.data[0].embedding == pytest.approx(fake_vector("Our tone of voice.", 3))
    assert CompletionRecord.objects.count() == 3


def test_the_anthropic_sdk_thinks_streams_and_counts_under_uvicorn(served, token, fake_provider):
    fake_provider.script(
        Reply(text="Warm and direct.", thinking=((THOUGHT, SIGNATURE),)),
        Reply(text="Short sentences.", thinking=((THOUGHT, SIGNATURE),)),
    )
    client = anthropic.Anthropic(base_url=f"{served}/api/anthropic", api_key=token, max_retries=0, timeout=20)
    ask = {
        "model": "claude-notes",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "Describe our tone."}],
    }

    message = client.messages.create(**ask)
    with client.messages.stream(**ask) as stream:
        final = stream.get_final_message()
    counted = client.messages.count_tokens(model="claude-notes", messages=ask["messages"])

    for answer, text in ((message, "Warm and direct."), (final, "Short sentences.")):
        assert [block.type for block in answer.content] == ["thinking", "text"]
        assert (answer.content[0].signature, answer.content[1].text) == (SIGNATURE, text)
    assert counted.input_tokens > 0
    assert len(fake_provider.requests) == 2  # count_tokens sends nothing
