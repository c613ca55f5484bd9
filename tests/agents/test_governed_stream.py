"""A governed stream: the same check, fit and guard pass as a send, and a reply redacted as it streams
(agents/runtime/send.py GovernedCall.stream, agents/runtime/streaming.py)."""

from __future__ import annotations

import json
import random
import string

import pytest

from agents.runtime.outcome import Answered, Ended
from agents.runtime.plan import send_plan
from agents.runtime.request import SendRequest
from agents.runtime.send import GovernedCall
from agents.runtime.streaming import GovernedStream
from catalog.models import ProviderKind
from governance.errors import ContextRefused
from governance.guardrails.redaction import redact
from governance.models import GovernanceEvent
from governance.services import EventContext
from governance.vocabulary import DataClass, TrustZone
from providers.failures import ProviderError
from providers.streams import TextDelta, ToolCallDelta, UsageDelta
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import FakeProvider, Reply, server_error

pytestmark = pytest.mark.django_db


def github_token(seed: int) -> str:
    rng = random.Random(seed)
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def configuration(fake: FakeProvider, kind: str, zone: str = TrustZone.LOCAL):
    base_url = fake.openai_base_url if kind == ProviderKind.OPENAI_COMPATIBLE else fake.anthropic_base_url
    provider = provider_make(kind=kind, base_url=base_url, trust_zone=zone, timeout_seconds=5, max_retries=0)
    return configuration_make(model=model_make(provider=provider, model_id="m-1"))


def stream_of(
    config, task_input: str = "Where is the deploy token?", input_class: str = DataClass.PUBLIC_CONTENT
):
    plan = send_plan(
        configuration=config, request=SendRequest(task_input=task_input, input_data_class=input_class)
    )
    events = EventContext(correlation_id="stream-test", configuration=config.identifier)
    return GovernedCall(plan, events, client_id=None)


KINDS = [ProviderKind.OPENAI_COMPATIBLE, ProviderKind.ANTHROPIC]


@pytest.mark.parametrize("kind", KINDS)
def test_a_secret_split_across_deltas_never_reaches_the_reader(fake_provider, kind):
    token = github_token(1)
    text = f"The deploy token is {token} and it expires tomorrow."
    fake_provider.script(Reply(text=text))
    call = stream_of(configuration(fake_provider, kind))
    stream = call.stream()
    assert isinstance(stream, GovernedStream)
    with stream:
        deltas = list(stream)
    texts = [d.text for d in deltas if isinstance(d, TextDelta)]
    assert all(token[i : i + 8] not in piece for piece in texts for i in range(len(token) - 7))
    assert (
        "".join(texts)
        == redact(text).text
        == "The deploy token is [REDACTED:github_token] and it expires tomorrow."
    )
    assert len(texts) > 3  # it streamed: not one piece at the end
    answered = deltas[-1]
    assert isinstance(answered, Answered) and answered.reply.text == "".join(texts)
    assert answered.served.model_id == "m-1" and answered.reply_redactions == {"github_token": 1}
    assert [type(d) for d in deltas].count(UsageDelta) == 1
    event = GovernanceEvent.objects.get(correlation_id="stream-test", decision="secret_redacted")
    assert event.reason == "1 x github_token"


def test_tool_call_arguments_are_redacted_across_their_pieces(fake_provider):
    token = github_token(2)
    fake_provider.script(Reply.tools(("call_1", "deploy", {"token": token, "env": "prod"})))
    call = stream_of(configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE))
    with call.stream() as stream:
        deltas = list(stream)
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    arguments = "".join(c.arguments for c in calls)
    assert arguments == '{"token":"[REDACTED:github_token]","env":"prod"}'
    assert (calls[0].id, calls[0].name) == ("call_1", "deploy")
    assert deltas[-1].reply.tool_calls[0].arguments == arguments


def test_a_refused_source_sends_nothing_and_opens_no_stream(fake_provider):
    config = configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE, zone=TrustZone.EXTERNAL_GLOBAL)
    call = stream_of(config, input_class=DataClass.SECRET_ADJACENT)
    ended = call.stream()
    assert isinstance(ended, Ended) and isinstance(ended.error, ContextRefused)
    assert ended.decision is None and ended.served is None and ended.fitted is None
    assert fake_provider.requests == []


def test_the_input_is_redacted_on_the_wire_and_the_call_asks_for_a_stream(fake_provider):
    token = github_token(3)
    call = stream_of(configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE), task_input=f"use {token}")
    with call.stream() as stream:
        list(stream)
    assert token not in fake_provider.wire_text()
    (body,) = fake_provider.bodies()
    assert body["stream"] is True
    assert "[REDACTED:github_token]" in body["messages"][-1]["content"]


def test_a_provider_failure_before_the_first_delta_ends_the_call(fake_provider):
    fake_provider.script(server_error())
    call = stream_of(configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE))
    ended = call.stream()
    assert isinstance(ended, Ended) and isinstance(ended.error, ProviderError)
    assert ended.error.status == 500 and ended.served is None and ended.fitted is not None


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_between_escaped_quotes_in_streamed_arguments_leaves_valid_json(fake_provider, kind):
    # Issue 26: the placeholder took the escaped quote after the token, and the SDKs' json.loads failed.
    token = github_token(4)
    fake_provider.script(Reply.tools(("call_1", "shell", {"cmd": f'export TOKEN="{token}"'})))
    call = stream_of(configuration(fake_provider, kind))
    with call.stream() as stream:
        deltas = list(stream)
    arguments = "".join(d.arguments for d in deltas if isinstance(d, ToolCallDelta))
    assert arguments == '{"cmd":"export TOKEN=\\"[REDACTED:github_token]\\""}'
    assert json.loads(arguments) == {"cmd": 'export TOKEN="[REDACTED:github_token]"'}
    assert deltas[-1].reply.tool_calls[0].arguments == arguments
