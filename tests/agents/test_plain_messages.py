"""A plain message sent again (a conversation is re-sent whole every turn) is parsed once: every later
request gets the same Message, so what is kept by its identity is found again (agents/runtime/conversation.py)."""

from __future__ import annotations

import pytest

from agents.runtime.caches import registered_caches
from agents.runtime.conversation import Conversation, conversation_request
from context_assembly.errors import InvalidMessage

CONVERSATION = Conversation(default_class="public_content")


def _messages() -> list[dict]:  # fresh objects each time, as each request's JSON body parses them
    return [
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": "Question one?"},
        {"role": "assistant", "content": "Answer one."},
        {"role": "user", "content": "Question two?", "name": "ana"},
    ]


def test_the_same_plain_messages_sent_again_are_the_same_messages():
    first = conversation_request(_messages(), CONVERSATION)
    again = conversation_request(_messages(), CONVERSATION)
    assert [entry.message for entry in again.transcript] == [entry.message for entry in first.transcript]
    assert all(
        later.message is earlier.message
        for later, earlier in zip(again.transcript, first.transcript, strict=True)
    )
    assert [
        (entry.message.role, entry.message.content, entry.message.name) for entry in again.transcript
    ] == [
        ("assistant", "Answer one.", None),
        ("user", "Question two?", "ana"),
    ]
    assert again.caller_context == first.caller_context


def test_a_message_that_differs_in_any_field_is_its_own_message():
    base = conversation_request(_messages(), CONVERSATION).transcript[1].message
    renamed = _messages()
    renamed[3]["name"] = "bo"
    other = conversation_request(renamed, CONVERSATION).transcript[1].message
    assert other is not base
    assert (other.name, base.name) == ("bo", "ana")


def test_a_message_with_more_than_the_plain_fields_is_parsed_anew_each_time():
    def messages() -> list[dict]:
        return [
            {"role": "user", "content": "Look it up."},
            {"role": "assistant", "content": None, "tool_calls": [_call()]},
        ]

    first = conversation_request(messages(), CONVERSATION).transcript[0].message
    again = conversation_request(messages(), CONVERSATION).transcript[0].message
    assert first == again
    assert first is not again


def _call() -> dict:
    return {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def test_an_invalid_plain_message_is_refused_every_time_and_nothing_is_kept():
    bad = [{"role": "user", "content": "Hi"}, {"role": "tool", "content": "result"}]
    for _ in range(2):
        with pytest.raises(InvalidMessage, match=r"messages\[1\]\.tool_call_id"):
            conversation_request([dict(message) for message in bad], CONVERSATION)
    kept = next(entry for entry in registered_caches() if entry.name == "plain_messages").stats()
    # The user message alone is kept; the tool message missed twice and was never stored.
    assert (kept.size, kept.hits, kept.misses) == (1, 1, 3)


def test_each_message_is_looked_up_once_per_request_and_found_again_the_next():
    conversation_request(_messages(), CONVERSATION)
    conversation_request(_messages(), CONVERSATION)
    kept = next(entry for entry in registered_caches() if entry.name == "plain_messages").stats()
    assert (kept.size, kept.hits, kept.misses) == (4, 4, 4)


def test_a_kept_message_sent_again_with_its_own_class_takes_that_class():
    conversation_request(_messages(), CONVERSATION)
    classed = _messages()
    classed[2]["data_class"] = "personal_data"
    again = conversation_request(classed, CONVERSATION)
    assert [(entry.message.content, entry.data_class) for entry in again.transcript] == [
        ("Answer one.", "personal_data"),
        ("Question two?", "public_content"),
    ]
    assert (
        again.transcript[0].message is conversation_request(_messages(), CONVERSATION).transcript[0].message
    )
