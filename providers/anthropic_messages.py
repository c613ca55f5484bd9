"""Wire-neutral messages and tool specs as a Messages API request (Anthropic).

From the wire-neutral messages (OpenAI shape); the call's other parameters are the adapter's
(:mod:`providers.anthropic`):

* every ``system`` message, wherever it stands, goes to the top-level ``system`` parameter, joined in
  order with blank lines (Anthropic has no system role inside ``messages``);
* message content is always sent as a list of blocks; empty text blocks are left out (the API rejects
  them), and a message left with no block at all is dropped;
* assistant tool calls become ``tool_use`` blocks whose ``input`` is the parsed arguments. Arguments
  that are not a JSON object are refused *before sending* as ``client_error``: the API would reject
  them, and guessing a repair would put something on the wire the model never said;
* ``tool`` messages become ``tool_result`` blocks inside a user message;
* consecutive messages of the same role are merged into one (the API requires alternation), keeping
  block order, so tool results precede a following user text;
* an assistant's thinking blocks lead its content as they came (a block without its signature, whose
  text was redacted on its way to the caller, cannot be proved and is left out, as the API allows for
  earlier turns);
* ``name`` is not sent (the Messages API has no such field); image parts become ``image`` blocks and PDF file parts ``document`` blocks
  (``base64`` for data URLs, ``url`` otherwise) and their ``detail`` is dropped.

The skill block is split off as the first block of the first user message (by the call's layout), so
:mod:`providers.anthropic_cache` can mark it as a cache prefix.
"""

from __future__ import annotations

import json
from typing import Any

from context_assembly.messages import (
    FilePart,
    ImagePart,
    Message,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolSpec,
    thaw_json,
)
from providers.anthropic_cache import BlockRef, WireMessages
from providers.values import NO_LAYOUT, PromptLayout

EMPTY_SCHEMA = {"type": "object", "properties": {}}


class Untranslatable(Exception):
    """A message cannot be expressed in the Messages API; ``problem`` names where, never the content."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _text_of(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(part.text for part in message.content if isinstance(part, TextPart))


def _image_block(part: ImagePart, where: str) -> dict[str, Any]:
    if not part.url.startswith("data:"):
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    header, separator, data = part.url.partition(",")
    if not separator or not header.endswith(";base64"):
        raise Untranslatable(f"{where}: an image data URL must be base64-encoded")
    media_type = header[len("data:") : -len(";base64")]
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _content_blocks(message: Message, where: str) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}] if message.content else []
    blocks = []
    for part in message.content:
        if isinstance(part, ImagePart):
            blocks.append(_image_block(part, where))
        elif isinstance(part, FilePart):
            source = {"type": "base64", "media_type": part.media_type, "data": part.data}
            blocks.append({"type": "document", "source": source})
        elif part.text:
            blocks.append({"type": "text", "text": part.text})
    return blocks


def _tool_use_block(call: ToolCall, where: str) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        raise Untranslatable(f"{where}: tool call {call.id!r} has arguments that are not JSON") from None
    if not isinstance(arguments, dict):
        raise Untranslatable(f"{where}: tool call {call.id!r} has arguments that are not a JSON object")
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}


def _wire_message(message: Message, index: int) -> tuple[str, list[dict[str, Any]]]:
    where = f"messages[{index}]"
    if message.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        content = _content_blocks(message, where)  # text only: images are refused outside user messages
        if content:
            result["content"] = content
        return "user", [result]
    blocks = [_thinking_block(block) for block in message.thinking if block.signature or block.data]
    blocks += _content_blocks(message, where)
    blocks += [_tool_use_block(call, where) for call in message.tool_calls]
    return message.role, blocks


def _thinking_block(block: ThinkingBlock) -> dict[str, Any]:
    """A thinking block as it came from the API (its signature proves it), or a redacted one."""
    if block.data:
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _split_skill_block(blocks: list[dict[str, Any]], chars: int) -> list[dict[str, Any]] | None:
    """The first user message's blocks with its first ``chars`` characters as a block of their own, so
    a cache breakpoint can close right after the skill block; None when there is nothing to split.
    Together the two blocks carry exactly the text of the one they replace."""
    if chars <= 0 or not blocks or blocks[0]["type"] != "text":
        return None
    text = blocks[0]["text"]
    head, rest = text[:chars], text[chars:]
    if not head.strip() or not rest.strip():
        return None  # the API refuses whitespace-only text blocks
    return [{"type": "text", "text": head}, {"type": "text", "text": rest}, *blocks[1:]]


def _last_block(wire: list[dict[str, Any]]) -> BlockRef | None:
    return (len(wire) - 1, len(wire[-1]["content"]) - 1) if wire else None


def translate_messages(messages: tuple[Message, ...], layout: PromptLayout = NO_LAYOUT) -> WireMessages:
    """The system text and messages for the Messages API; see the module docstring for the rules."""
    system = "\n\n".join(_text_of(m) for m in messages if m.role == "system" and _text_of(m))
    wire: list[dict[str, Any]] = []
    skill_block: BlockRef | None = None
    transcript_end: BlockRef | None = None
    stable = layout.transcript_end(len(messages))
    first_user = True
    for index, message in enumerate(messages):
        if index == stable:
            transcript_end = _last_block(wire)
        if message.role == "system":
            continue
        role, blocks = _wire_message(message, index)
        split = None
        if first_user and role == "user":
            split, first_user = _split_skill_block(blocks, layout.skill_block_chars), False
        blocks = split or blocks
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            offset = len(wire[-1]["content"])
            wire[-1]["content"].extend(blocks)
        else:
            offset = 0
            wire.append({"role": role, "content": blocks})
        if split:
            skill_block = (len(wire) - 1, offset)
    if stable == len(messages):
        transcript_end = _last_block(wire)  # no tail: the transcript ends the messages
    return WireMessages(system, wire, skill_block, transcript_end)


def translate_tool(spec: ToolSpec) -> dict[str, Any]:
    schema = thaw_json(spec.parameters) or dict(EMPTY_SCHEMA)
    schema.setdefault("type", "object")
    tool: dict[str, Any] = {"name": spec.name, "input_schema": schema}
    if spec.description:
        tool["description"] = spec.description
    return tool
