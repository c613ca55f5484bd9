"""Images and PDFs in a caller's input, through the official ``openai`` and ``anthropic`` SDKs against a
live server whose configuration is served by the loopback fake provider: what reached the wire, what was
counted, and what was refused before anything was sent (the fake's record stays empty).

Images and PDFs are made at test time (tests/media_files.py); a remote image is served by a loopback
HTTP server the test starts, which also records whether anything fetched from it.
"""

from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import openai
import pytest

from catalog.services import api_client_create
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.media_files import data_url, pdf, png

pytestmark = pytest.mark.django_db(transaction=True)


class ImageServer:
    """A loopback server answering every GET with ``body``; ``hits`` counts the requests it saw."""

    def __init__(self, body: bytes, content_type: str = "image/png") -> None:
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits += 1
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/chart.png"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ImageServer:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def served(fake_provider, **fields):
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_EU, identifier="vision", **fields
    )
    issued = api_client_create(
        name="vision-app",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.PUBLIC_CONTENT,
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    return configuration, issued.token


def client(live_server, token: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0, timeout=20
    )


def ask(live_server, token: str, *parts: dict) -> openai.types.chat.ChatCompletion:
    content = [{"type": "text", "text": "What does this show?"}, *parts]
    return client(live_server, token).chat.completions.create(
        model="vision", messages=[{"role": "user", "content": content}]
    )


def sources(completion) -> set[tuple[str, str, str]]:
    decision = completion.model_extra["governance"]["decision"]
    return {(s["kind"], s["identifier"], s["data_class"]) for s in decision["sources"]}


def estimated(completion) -> int:
    return completion.model_extra["context_usage"]["breakdown"]["estimated"]


def test_the_openai_sdk_sends_a_base64_image_counted_by_its_tiles(live_server, fake_provider):
    _, token = served(fake_provider)
    fake_provider.script(Reply(text="A grey square."), Reply(text="Nothing."))
    image = data_url(png(1024, 1024), "image/png")

    completion = ask(live_server, token, {"type": "image_url", "image_url": {"url": image, "detail": "high"}})
    without = ask(live_server, token)

    assert completion.choices[0].message.content == "A grey square."
    request = fake_provider.requests[0]
    assert request.body["messages"][-1]["content"] == [
        {"type": "text", "text": "What does this show?"},
        {"type": "image_url", "image_url": {"url": image, "detail": "high"}},
    ]
    assert ("caller_context", "messages[0].content[1]", "public_content") in sources(completion)
    # OpenAI's vision guide ("Calculating costs"): a 1024x1024 image in high detail costs 765 tokens.
    assert estimated(completion) - estimated(without) == 765


@pytest.mark.parametrize("allowed", [["127.0.0.1/32"]])
def test_an_image_url_is_fetched_by_the_service_and_sent_as_its_bytes(
    live_server, fake_provider, settings, allowed
):
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = allowed
    _, token = served(fake_provider, allow_remote_media=True)
    fake_provider.script(Reply(text="A chart."))
    body = png(512, 512)
    with ImageServer(body) as server:
        completion = ask(
            live_server, token, {"type": "image_url", "image_url": {"url": server.url, "detail": "low"}}
        )
    assert server.hits == 1
    assert completion.choices[0].message.content == "A chart."
    part = fake_provider.requests[0].body["messages"][-1]["content"][1]
    assert part == {"type": "image_url", "image_url": {"url": data_url(body, "image/png"), "detail": "low"}}
    assert server.url not in fake_provider.wire_text()


def test_a_private_address_is_never_fetched_and_nothing_is_sent(live_server, fake_provider):
    _, token = served(fake_provider, allow_remote_media=True)
    with ImageServer(png(8, 8)) as server, pytest.raises(openai.BadRequestError) as refused:
        ask(live_server, token, {"type": "image_url", "image_url": {"url": server.url}})
    assert server.hits == 0
    assert fake_provider.requests == []
    assert (refused.value.code, refused.value.param) == (
        "media_refused",
        "messages[0].content[1].image_url.url",
    )
    assert "loopback, private or reserved address" in refused.value.message


def test_a_remote_url_is_refused_where_the_configuration_does_not_fetch(live_server, fake_provider, settings):
    settings.MEDIA_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    _, token = served(fake_provider)
    with ImageServer(png(8, 8)) as server, pytest.raises(openai.BadRequestError) as refused:
        ask(live_server, token, {"type": "image_url", "image_url": {"url": server.url}})
    assert (server.hits, fake_provider.requests) == (0, [])
    assert "does not fetch remote media" in refused.value.message


def test_a_model_without_the_modality_gets_a_400_naming_it_and_nothing_is_sent(live_server, fake_provider):
    _, token = served(fake_provider, model_input_modalities=["pdf"])
    image = data_url(png(64, 64), "image/png")
    with pytest.raises(openai.BadRequestError) as refused:
        ask(live_server, token, {"type": "image_url", "image_url": {"url": image}})
    assert fake_provider.requests == []
    assert refused.value.code == "modality_not_supported"
    assert "model 'gpt-4o' does not accept image input" in refused.value.message


def test_the_openai_sdk_sends_a_pdf_counted_by_its_text_and_pages(live_server, fake_provider):
    _, token = served(fake_provider)
    fake_provider.script(Reply(text="A report."), Reply(text="Nothing."))
    document = pdf("Quarterly report: revenue grew.", "Second page.")
    part = {
        "type": "file",
        "file": {"filename": "q3.pdf", "file_data": data_url(document, "application/pdf")},
    }

    completion = ask(live_server, token, part)
    without = ask(live_server, token)

    sent = fake_provider.requests[0].body["messages"][-1]["content"][1]
    assert sent == {
        "type": "file",
        "file": {"filename": "q3.pdf", "file_data": data_url(document, "application/pdf")},
    }
    from agents.runtime.plan import model_profile
    from catalog.models import LlmModel
    from context_assembly.estimator import Estimator

    estimator = Estimator(model_profile(LlmModel.objects.select_related("provider").get(model_id="gpt-4o")))
    text = estimator.count_text("Quarterly report: revenue grew.\n\nSecond page.")
    # The text plus one page image per page, each at OpenAI's high-detail maximum (1445).
    assert estimated(completion) - estimated(without) == text + 2 * 1445


def test_a_pdf_whose_text_holds_a_secret_is_sent_as_its_redacted_text(live_server, fake_provider):
    from tests.canaries import generate_canaries

    secret = {c.kind: c for c in generate_canaries(seed=20261215)}["github_classic_pat"].value
    _, token = served(fake_provider)
    fake_provider.script(Reply(text="ok"))
    document = pdf(f"Deploy key {secret}")
    completion = ask(
        live_server,
        token,
        {
            "type": "file",
            "file": {"filename": "keys.pdf", "file_data": data_url(document, "application/pdf")},
        },
    )
    sent = fake_provider.requests[0].body["messages"][-1]["content"][1]
    assert sent == {
        "type": "text",
        "text": 'Document "keys.pdf" (its text; redacted):\nDeploy key [REDACTED:github_token]',
    }
    assert base64.b64encode(document).decode() not in fake_provider.wire_text()
    assert completion.model_extra["governance"]["redactions"]["sent"] == {"github_token": 1}


def test_the_anthropic_sdk_sends_an_image_block(live_server, fake_provider):
    _, token = served(fake_provider)
    fake_provider.script(Reply(text="A grey square."))
    encoded = base64.b64encode(png(200, 200)).decode()
    sdk = anthropic.Anthropic(
        base_url=f"{live_server.url}/api/anthropic", api_key=token, max_retries=0, timeout=20
    )
    message = sdk.messages.create(
        model="vision",
        max_tokens=100,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Describe it."},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": encoded},
                    },
                ],
            }
        ],
    )
    assert message.content[0].text == "A grey square."
    sent = fake_provider.requests[0].body["messages"][-1]["content"]
    assert sent == [
        {"type": "text", "text": "Describe it."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded}", "detail": "auto"}},
    ]
