"""Where the Anthropic adapter puts ``cache_control`` breakpoints, from the call's layout (no server)."""

from __future__ import annotations

import pytest

from context_assembly.messages import Message, ToolCall
from context_assembly.profiles import ModelCapabilities
from providers.anthropic import AnthropicAdapter
from providers.anthropic_cache import MAX_BREAKPOINTS
from providers.values import PromptLayout, ProviderCall, ProviderConfig

MARK = {"type": "ephemeral"}
LONG = "Keep sentences short and words plain. " * 200  # about 1,800 tokens, over Sonnet's 1,024
SKILLS = "<<<BEGIN>>> " + "Use the active voice. " * 300 + "<<<END>>>"
SYSTEM = Message(role="system", content=LONG)
FIRST = Message(role="user", content=f"{SKILLS}\n\nDraft the note.")
TURN = (
    Message(role="assistant", content="", tool_calls=(ToolCall("toolu_1", "lookup", "{}"),)),
    Message(role="tool", content="Found it.", tool_call_id="toolu_1"),
)
TAIL = Message(role="user", content="Context usage: 3,000 of 200,000 tokens used by the last step.")
LAYOUT = PromptLayout(head_messages=2, skill_block_chars=len(SKILLS), tail_messages=1)
SONNET = ModelCapabilities(cache_min_tokens=1_024)


@pytest.fixture
def adapter():
    adapter = AnthropicAdapter(
        ProviderConfig(identifier="a", kind="anthropic", base_url="http://127.0.0.1:9")
    )
    yield adapter
    adapter.close()


def body(adapter, messages, layout=LAYOUT, capabilities=SONNET, **call):
    return adapter.request_body(
        ProviderCall(
            model_id="claude-x",
            messages=messages,
            max_tokens=100,
            layout=layout,
            capabilities=capabilities,
            **call,
        )
    )


def marked(request: dict) -> list[tuple]:
    found = [("system",)] if isinstance(request.get("system"), list) else []
    for i, message in enumerate(request["messages"]):
        found += [(i, j) for j, block in enumerate(message["content"]) if block.get("cache_control") == MARK]
    return found


def test_the_skill_block_is_split_off_exactly_and_the_tail_note_stays_after_the_newest_turn(adapter):
    request = body(adapter, (SYSTEM, FIRST, *TURN, TAIL))
    first = request["messages"][0]["content"]
    assert [block["text"] for block in first] == [SKILLS, "\n\nDraft the note."]
    assert request["system"] == [{"type": "text", "text": LONG, "cache_control": MARK}]
    assert marked(request) == [("system",), (0, 0), (2, 0)]
    assert request["messages"][2]["content"][1] == {"type": "text", "text": TAIL.content}
    assert len(marked(request)) <= MAX_BREAKPOINTS


def test_without_a_transcript_the_first_user_message_is_not_marked(adapter):
    layout = PromptLayout(head_messages=2, skill_block_chars=len(SKILLS), tail_messages=1)
    request = body(adapter, (SYSTEM, FIRST, TAIL), layout=layout)
    assert marked(request) == [("system",), (0, 0)]


def test_a_short_system_prompt_is_not_marked_but_the_longer_prefixes_are(adapter):
    short = Message(role="system", content="Be brief.")
    request = body(adapter, (short, FIRST, *TURN, TAIL))
    assert request["system"] == "Be brief."
    assert marked(request) == [(0, 0), (2, 0)]


def test_nothing_is_marked_below_the_models_minimum(adapter):
    request = body(
        adapter, (SYSTEM, FIRST, *TURN, TAIL), capabilities=ModelCapabilities(cache_min_tokens=50_000)
    )
    assert marked(request) == []
    assert request["system"] == LONG
    assert [block["text"] for block in request["messages"][0]["content"]] == [SKILLS, "\n\nDraft the note."]


@pytest.mark.parametrize(
    ("content", "chars"),
    [(FIRST.content, 0), (f"{SKILLS}\n\n", len(SKILLS)), (SKILLS, len(SKILLS))],
)
def test_the_first_user_message_stays_whole_without_text_on_both_sides_of_the_split(adapter, content, chars):
    # The API refuses a whitespace-only text block; a probe as long as the message splits nothing.
    layout = PromptLayout(head_messages=2, skill_block_chars=chars)
    request = body(adapter, (SYSTEM, Message(role="user", content=content), *TURN), layout=layout)
    assert [block["text"] for block in request["messages"][0]["content"]] == [content]


def test_sampling_parameters_follow_the_capabilities(adapter):
    allowed = body(adapter, (SYSTEM, FIRST, TAIL), temperature=0.3)
    refused = body(
        adapter, (SYSTEM, FIRST, TAIL), temperature=0.3, capabilities=ModelCapabilities(sampling=False)
    )
    assert allowed["extra_body"] == {"temperature": 0.3}
    assert "extra_body" not in refused


def test_a_layout_larger_than_the_messages_is_a_programming_error():
    with pytest.raises(ValueError, match="layout"):
        ProviderCall(model_id="m", messages=(FIRST,), max_tokens=1, layout=PromptLayout(head_messages=2))
