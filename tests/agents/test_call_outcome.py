"""A governed call returns one frozen outcome whatever drives it: answered, with what it settled, or
ended, with why (agents/runtime/send.py, agents/runtime/outcome.py)."""

from __future__ import annotations

import dataclasses

import pytest

from agents.runtime.outcome import Answered, Ended
from agents.runtime.plan import send_plan
from agents.runtime.receipts import answer_receipt
from agents.runtime.request import SendRequest
from agents.runtime.send import GovernedCall
from agents.runtime.streaming import GovernedStream
from catalog.models import ProviderKind
from governance.errors import ContextRefused
from governance.vocabulary import DataClass, TrustZone
from providers.failures import FailureClass, ProviderError
from providers.streams import TextDelta
from tests.agents.test_governed_stream import configuration, github_token, stream_of
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


def test_an_answered_call_returns_one_frozen_outcome_with_what_it_settled(fake_provider):
    token = github_token(11)
    fake_provider.script(Reply(text=f"It is {token}.", prompt_tokens=40, completion_tokens=5))
    call = stream_of(configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE))

    answered = call.send()

    assert isinstance(answered, Answered)
    assert answered.reply.text == "It is [REDACTED:github_token]."
    assert answered.reply_redactions == {"github_token": 1}
    assert (answered.served.model_id, answered.clamped, answered.skipped) == ("m-1", False, ())
    assert answered.usage.prompt_tokens == 40 and answered.usage.completion_tokens == 5
    assert answered.label == answered.decision.label == DataClass.PUBLIC_CONTENT
    assert answered.receipt == answer_receipt(
        plan=answered.plan,
        decision=answered.decision,
        served=answered.served,
        reply_redactions={"github_token": 1},
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        answered.reply = None  # type: ignore[misc]
    # Nothing of what it settled is left to read off the call afterwards (no attribute, property or
    # method of that name: the call keeps its fields in slots, so ``dir`` lists them all).
    assert not {"decision", "fitted", "clamped", "skipped", "served", "reply_redactions"} & set(dir(call))


def test_a_refused_call_returns_its_refusal_and_sends_nothing(fake_provider):
    config = configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE, zone=TrustZone.EXTERNAL_GLOBAL)
    call = stream_of(config, input_class=DataClass.SECRET_ADJACENT)

    ended = call.send()

    assert isinstance(ended, Ended) and isinstance(ended.error, ContextRefused)
    assert ended.error.extra["request_id"] == "stream-test"
    assert (ended.decision, ended.fitted, ended.served, ended.skipped) == (None, None, None, ())
    assert fake_provider.requests == []


def test_a_stream_broken_after_its_first_delta_ends_with_the_providers_error(fake_provider):
    fake_provider.script(Reply(text="One two three four five six seven eight.", truncate_stream=True))
    call = stream_of(configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE))

    stream = call.stream()
    assert isinstance(stream, GovernedStream)
    with stream:
        pieces = list(stream)

    ended = pieces[-1]
    assert isinstance(ended, Ended) and isinstance(ended.error, ProviderError)
    assert ended.error.failure_class == FailureClass.CONNECTION
    assert ended.served is not None and ended.served.model_id == "m-1"
    assert ended.decision is not None and ended.fitted is not None
    assert all(isinstance(piece, TextDelta) for piece in pieces[:-1])


def test_every_driver_of_a_refused_call_returns_the_same_refusal(fake_provider):
    config = configuration(fake_provider, ProviderKind.OPENAI_COMPATIBLE, zone=TrustZone.EXTERNAL_GLOBAL)
    plan = send_plan(
        configuration=config,
        request=SendRequest(task_input="Go.", input_data_class=DataClass.SECRET_ADJACENT),
    )
    events = stream_of(config).events
    ends = [
        GovernedCall(plan, events, client_id=None).send(),
        GovernedCall(plan, events, client_id=None).stream(),
        GovernedCall(plan, events, client_id=None).prepare(stream=False),
        GovernedCall(plan, events, client_id=None).prepare(stream=True),
    ]
    assert all(isinstance(end, Ended) and isinstance(end.error, ContextRefused) for end in ends)
    assert fake_provider.requests == []
