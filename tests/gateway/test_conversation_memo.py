"""A caller's conversation is parsed for its one request: its messages go through redaction and
personal-data screening without the by-identity memos a run's held transcript uses
(``SendRequest.transcript_held``), so a chat completion leaves nothing in them."""

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


def test_a_chat_completion_leaves_the_by_identity_memos_empty(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    messages = [
        {"role": "user", "content": "First question."},
        {"role": "assistant", "content": "First answer."},
        {"role": "user", "content": "Second question."},
    ]

    response = caller.http.post(
        CHAT,
        json.dumps({"model": configuration.identifier, "messages": messages}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {caller.token}"},
    )

    assert response.status_code == 200
    assert [m["content"] for m in fake_provider.requests[-1].body["messages"][-3:]] == [
        "First question.",
        "First answer.",
        "Second question.",
    ]
    assert memo_sizes() == (0, 0)
