"""Messages and tool specs crossing the context-assembly seam: wire shape, hashability, validation."""

from __future__ import annotations

import pytest

from config.errors import ApplicationError
from context_assembly.errors import InvalidMessage
from context_assembly.messages import FrozenMapping, ImagePart, Message, TextPart, ToolCall, ToolSpec

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}


@pytest.mark.parametrize(
    "wire",
    [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "New synergies.", "name": "example_user"},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi there"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q":"x"}'}}
            ],
        },
        {"role": "tool", "content": '{"result": 42}', "tool_call_id": "call_1"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "https://example.test/cat.png", "detail": "low"}},
            ],
        },
    ],
)
def test_wire_messages_round_trip_unchanged(wire):
    assert Message.from_openai(wire).to_openai() == wire


def test_assistant_tool_call_message_parses_into_typed_parts():
    message = Message.from_openai(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    assert message == Message(role="assistant", content="", tool_calls=(ToolCall("c1", "f", "{}"),))


def test_image_part_without_detail_defaults_to_auto_on_the_wire():
    message = Message.from_openai(
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "https://example.test/a.png"}}],
        }
    )
    assert message.content == (ImagePart(url="https://example.test/a.png", detail="auto"),)
    assert message.to_openai()["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.test/a.png", "detail": "auto"}}
    ]


def test_image_size_is_kept_off_the_wire_but_changes_the_digest():
    sized = Message("user", (ImagePart("https://example.test/a.png", "high", 1024, 1024),))
    unsized = Message("user", (ImagePart("https://example.test/a.png", "high"),))
    assert sized.to_openai() == unsized.to_openai()
    assert sized.digest != unsized.digest


def test_messages_are_hashable_and_equal_by_value():
    first = Message("user", [TextPart("a"), TextPart("b")])
    second = Message("user", (TextPart("a"), TextPart("b")))
    assert first.content == (TextPart("a"), TextPart("b"))
    assert first == second
    assert len({first, second}) == 1
    assert first.digest == second.digest
    assert Message("user", "a").digest != Message("assistant", "a").digest


def test_null_valued_unmodelled_fields_are_ignored():
    message = Message.from_openai({"role": "assistant", "content": "ok", "refusal": None, "audio": None})
    assert message == Message("assistant", "ok")


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        ("not a message", "message"),
        ({"role": "robot", "content": "x"}, "role"),
        ({"content": "x"}, "role"),
        ({"role": "user"}, "content"),
        ({"role": "user", "content": 7}, "content"),
        ({"role": "user", "content": []}, "content"),
        ({"role": "user", "content": "x", "audio": {"id": "a"}}, "audio"),
        ({"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}, "content[0].type"),
        ({"role": "user", "content": [{"type": "text"}]}, "content[0].text"),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "ultra"}}],
            },
            "content[0].image_url.detail",
        ),
        (
            {"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://e.test/i"}}]},
            "content[0]",
        ),
        ({"role": "tool", "content": "42"}, "tool_call_id"),
        ({"role": "user", "content": "x", "tool_call_id": "c1"}, "tool_call_id"),
        ({"role": "tool", "content": "42", "tool_call_id": "c1", "name": "n"}, "name"),
        ({"role": "user", "content": "x", "name": ""}, "name"),
        (
            {"role": "user", "content": "x", "tool_calls": [{"id": "c", "function": {"name": "f"}}]},
            "tool_calls",
        ),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}, "tool_calls[0].function"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "custom", "function": {}}],
            },
            "tool_calls[0].type",
        ),
        ({"role": "assistant", "content": None}, "content"),
    ],
)
def test_invalid_wire_message_raises_typed_error_naming_the_field(wire, field):
    with pytest.raises(InvalidMessage) as caught:
        Message.from_openai(wire)
    assert caught.value.code == "invalid_message"
    assert caught.value.extra == {"field": field}
    assert isinstance(caught.value, ApplicationError)


def test_invalid_message_error_never_echoes_content():
    content = "-".join(["confidential", "quarterly", "figures"])
    with pytest.raises(InvalidMessage) as caught:
        Message.from_openai({"role": "narrator", "content": content})
    assert content not in str(caught.value)
    assert content not in repr(caught.value.as_dict())


def test_direct_construction_is_validated_like_parsing():
    with pytest.raises(InvalidMessage) as caught:
        Message("assistant", "x", tool_calls=("not a call",))  # type: ignore[arg-type]
    assert caught.value.extra == {"field": "tool_calls"}
    with pytest.raises(InvalidMessage):
        ImagePart("https://example.test/a.png", width=0, height=10)


def test_tool_spec_round_trips_the_wrapped_wire_shape():
    spec = ToolSpec.from_openai(WEATHER_TOOL)
    assert spec.name == "get_current_weather"
    assert spec.to_openai() == WEATHER_TOOL


def test_tool_spec_accepts_the_bare_function_object_and_strict_flag():
    bare = {"name": "ping", "description": "Ping.", "parameters": {"type": "object"}, "strict": True}
    spec = ToolSpec.from_openai(bare)
    assert spec.to_openai() == {"type": "function", "function": bare}


def test_tool_spec_parameters_are_frozen_and_hashable():
    spec = ToolSpec.from_openai(WEATHER_TOOL)
    same = ToolSpec.from_openai(WEATHER_TOOL)
    assert isinstance(spec.parameters, FrozenMapping)
    assert spec.parameters["properties"]["unit"]["enum"] == ("celsius", "fahrenheit")
    assert spec == same and hash(spec) == hash(same) and spec.digest == same.digest
    with pytest.raises(TypeError):
        spec.parameters["type"] = "array"  # type: ignore[index]


def test_tool_spec_from_a_plain_dict_equals_the_parsed_one():
    function = WEATHER_TOOL["function"]
    built = ToolSpec(function["name"], function["description"], function["parameters"])
    assert built == ToolSpec.from_openai(WEATHER_TOOL)


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        ({"type": "function", "function": {"name": "has space"}}, "function.name"),
        ({"type": "function", "function": {"name": "x" * 65}}, "function.name"),
        ({"type": "code_interpreter"}, "type"),
        ({"type": "function", "function": {"name": "f", "parameters": []}}, "function.parameters"),
        (
            {"type": "function", "function": {"name": "f", "parameters": {"properties": []}}},
            "function.parameters.properties",
        ),
        (
            {"type": "function", "function": {"name": "f", "parameters": {"default": {1, 2}}}},
            "function.parameters.default",
        ),
        ({"type": "function", "function": {"name": "f", "examples": ["x"]}}, "function.examples"),
    ],
)
def test_invalid_tool_spec_raises_typed_error(wire, field):
    with pytest.raises(InvalidMessage) as caught:
        ToolSpec.from_openai(wire)
    assert caught.value.extra == {"field": field}


@pytest.mark.parametrize(
    ("message", "digest"),
    [
        (
            Message("user", "héllo \ud800x"),
            "fc081a2db94cc142e56370bb3b1f811fac20d9fa04bd1d8e63676b9d3f7ac28d",
        ),
        (
            Message(
                "assistant",
                "",
                tool_calls=(ToolCall("c1", "fn", '{"a":1}'), ToolCall("c2", "g", "")),
                name="bot",
            ),
            "29314769f85f28f1a5b48e4aa9087fe6f8b1251b346d6cb45deeab9f86d8f8a8",
        ),
        (
            Message("tool", "result", tool_call_id="c1"),
            "c11b8b171c7a1dbe46c0ac26adccdf97a1aa1a0c88122e689fe6e771d44a5abe",
        ),
        (Message("system", ""), "53135af8aa1ba64164a8b59f998fa5e9bfe0938a8bd4b47eb822e7f4b37cf7de"),
    ],
)
def test_a_text_messages_digest_is_the_same_in_every_release(message, digest):
    # The local provider's replies and the token cache are keyed by these bytes: a change of the
    # digest's layout would change both without a test noticing otherwise.
    assert message.digest.hex() == digest
