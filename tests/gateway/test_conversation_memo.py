"""What redaction and personal-data screening remember by a message's identity is kept only for a
message that outlives its send (``TranscriptEntry.held``): a run's transcript, or a plain message of a
conversation, which is kept parsed for the requests that send it again (agents/runtime/conversation.py).
A message parsed for one request alone (one carrying tool calls) leaves nothing in those memos."""

from __future__ import annotations

import json

import pytest

from agents.runtime import screening
from agents.runtime.redactions import REDACTION_MEMO, Redactions
from context_assembly.messages import Message
from tests.agents.runs import fake_configuration

pytestmark = pytest.mark.django_db

CHAT = "/api/openai/v1/chat/completions"


def memo_sizes() -> tuple[int, int]:
    return len(REDACTION_MEMO.messages), len(screening._MESSAGES)


def test_a_held_message_is_remembered_by_identity_and_a_passing_one_is_not():
    held, passing = Message("user", "kept between steps"), Message("user", "sent once")
    assert Redactions().message(held) is held
    screening.PartScreen().message(held, own=True)
    assert memo_sizes() == (1, 1)
    assert Redactions().message(passing, remember=False) is passing
    screening.PartScreen().message(passing, own=True, remember=False)
    assert memo_sizes() == (1, 1)


def test_a_chat_completion_remembers_its_plain_messages_and_finds_them_when_sent_again(
    fake_provider, make_caller
):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    messages = [
        {"role": "user", "content": "First question."},
        {"role": "assistant", "content": "First answer."},
        {"role": "user", "content": "Second question."},
    ]

    for _ in range(2):
        response = _chat(caller, configuration, messages)
        assert response.status_code == 200
        # The transcript's two messages, remembered once, found the second time.
        assert memo_sizes() == (2, 2)
    assert [m["content"] for m in fake_provider.requests[-1].body["messages"][-3:]] == [
        "First question.",
        "First answer.",
        "Second question.",
    ]
    assert (REDACTION_MEMO.messages.hits, screening._MESSAGES.hits) == (2, 2)


def test_a_message_parsed_for_its_one_request_leaves_the_by_identity_memos_empty(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Look it up."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "Found it."},
    ]

    response = _chat(caller, configuration, messages)

    assert response.status_code == 200
    assert memo_sizes() == (1, 1)  # the tool result (plain); the assistant's call, parsed anew, is not kept


def _chat(caller, configuration, messages):
    return caller.http.post(
        CHAT,
        json.dumps({"model": configuration.identifier, "messages": messages}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {caller.token}"},
    )
