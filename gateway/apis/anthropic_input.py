"""An Anthropic Messages request (``/api/anthropic/v1/messages``) as the conversation a chat completion
governs: its ``system`` and ``messages`` become chat messages and go through the same
:func:`~gateway.apis.responses_input.send_request` (and so
:func:`agents.runtime.conversation.conversation_request`) as the Responses API's input, so every entry
point is governed alike.

* ``system`` (a string, or a list of text blocks joined by a line break) is a leading system message:
  caller context (or, where the configuration allows a system override, the system prompt), named
  ``system``;
* ``messages[i]`` with role ``user`` is a user message of its text blocks; each ``tool_result`` block
  in it is a ``tool`` message (named ``messages[i].content[j]``) before the user's text, as Anthropic
  requires tool results first. A result with ``is_error`` is sent prefixed ``Error:`` (the chat shape
  has no flag for it);
* ``messages[i]`` with role ``assistant`` is an assistant message: its text blocks, and its
  ``tool_use`` blocks as tool calls (the input serialised as JSON arguments);
* a ``system`` message inside ``messages`` (Claude Code sends one) is carried as the chat path carries a
  later system message: a user message labelled with its role, never the configuration's prompt;
* every message is a source of its ``data_class`` (an extension field), else the request's default
  class. ``cache_control`` is accepted on any block and tool (its shape checked) and never forwarded
  as given: where the serving provider is Anthropic the adapter places its own breakpoints on the
  governed prefix (providers/anthropic_cache.py); elsewhere the provider caches by prefix on its own.

``image`` and ``document`` blocks (base64 or URL sources; a document must be a PDF) in a user message
become the chat path's ``image_url`` and ``file`` parts, after its text, each a source of its own
``data_class`` (an extension field on the block), else its message's.

Blocks this service does not carry are a 400 naming the block: ``thinking`` and ``redacted_thinking`` (no reply from here holds one), server tool blocks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents.runtime.conversation import DATA_CLASS_FIELD, THINKING_FIELD, invalid
from gateway.apis.responses_input import Entry

_ROLES = ("user", "assistant", "system")
_NOT_CARRIED = {
    "thinking": "thinking blocks are accepted in assistant messages only",
    "redacted_thinking": "thinking blocks are accepted in assistant messages only",
}
_TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}


def system_entry(raw: Any, default_class: str) -> Entry | None:
    """The ``system`` parameter as a leading system message, or None when it is absent or empty."""
    if raw is None:
        return None
    text = raw if isinstance(raw, str) else _texts(raw, "system")
    return Entry({"role": "system", "content": text}, default_class, "system") if text else None


def message_entries(raw: Any, default_class: str) -> tuple[Entry, ...]:
    """The chat messages of ``messages``; raises :class:`InvalidMessage` naming the field."""
    if not isinstance(raw, list) or not raw:
        raise invalid("messages", "expected a non-empty list of messages")
    entries: list[Entry] = []
    for index, message in enumerate(raw):
        where = f"messages[{index}]"
        if not isinstance(message, Mapping):
            raise invalid(where, f"expected an object, got {type(message).__name__}")
        role = message.get("role")
        if role not in _ROLES:
            raise invalid(f"{where}.role", f"must be one of {', '.join(_ROLES)}")
        if index == 0 and role != "user":
            raise invalid(f"{where}.role", "the first message must be a user message")
        data_class = message.get(DATA_CLASS_FIELD) or default_class
        content = message.get("content")
        if role == "assistant":
            entries.append(Entry(_assistant(content, f"{where}.content"), data_class, where))
        elif role == "system":
            entries.append(Entry({"role": "system", "content": _text(content, where)}, data_class, where))
        else:
            entries.extend(_user(content, where, data_class))
    if entries[0].message["role"] != "user":
        raise invalid("messages[0].content", "the first message must hold text, not only tool results")
    return tuple(entries)


def _user(content: Any, where: str, data_class: str) -> list[Entry]:
    """A user message: its tool results (each a ``tool`` message), then its text, if any."""
    if isinstance(content, str):
        return [Entry({"role": "user", "content": content}, data_class, where)]
    blocks = _blocks(content, f"{where}.content")
    results, texts, media = [], [], []
    for position, block in enumerate(blocks):
        at = f"{where}.content[{position}]"
        if block["type"] == "tool_result":
            results.append(Entry(_tool_result(block, at), data_class, at))
        elif block["type"] == "text":
            texts.append(_block_text(block, at))
        elif block["type"] in ("image", "document"):
            media.append(_media_part(block, at))
        else:
            raise invalid(
                f"{at}.type", _refused_block(block["type"], "text, image, document and tool_result")
            )
    if not texts and not media:
        return results
    joined: Any = "\n".join(texts)
    if media:
        joined = ([{"type": "text", "text": joined}] if texts else []) + media
    return [*results, Entry({"role": "user", "content": joined}, data_class, where)]


def _media_part(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An ``image`` or ``document`` block as the chat part the conversation reads (a data URL of a
    base64 source, or the URL of a url source)."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    if kind == "base64" and isinstance(source, Mapping):
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    elif kind == "url" and isinstance(source, Mapping) and isinstance(source.get("url"), str):
        url = source["url"]
    else:
        raise invalid(f"{where}.source.type", "expected a base64 or url source")
    part: dict[str, Any]
    if block["type"] == "image":
        part = {"type": "image_url", "image_url": {"url": url}}
    else:
        title = block.get("title")
        part = {"type": "file", "file": {"file_data" if kind == "base64" else "file_url": url}}
        if isinstance(title, str) and title:
            part["file"]["filename"] = title
    if block.get(DATA_CLASS_FIELD) is not None:
        part[DATA_CLASS_FIELD] = block[DATA_CLASS_FIELD]
    return part


def _assistant(content: Any, where: str) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts, calls, thinking = [], [], []
    for position, block in enumerate(_blocks(content, where)):
        at = f"{where}[{position}]"
        if block["type"] == "text":
            texts.append(_block_text(block, at))
        elif block["type"] == "tool_use":
            calls.append(_tool_use(block, at))
        elif block["type"] in ("thinking", "redacted_thinking"):
            thinking.append(_thinking(block, at))
        else:
            raise invalid(f"{at}.type", _refused_block(block["type"], "text, tool_use and thinking"))
    message: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    if thinking:
        message[THINKING_FIELD] = thinking
    return message


def _thinking(block: Mapping[str, Any], where: str) -> dict[str, str]:
    """A thinking block as the conversation carries it: text and signature, or a redacted one's data."""
    names = ("data",) if block["type"] == "redacted_thinking" else ("thinking", "signature")
    for name in names:
        if not isinstance(block.get(name), str):
            raise invalid(f"{where}.{name}", "expected a string")
    return {name: block[name] for name in names}


def _tool_use(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    for key in ("id", "name"):
        if not isinstance(block.get(key), str) or not block[key]:
            raise invalid(f"{where}.{key}", "expected a non-empty string")
    if not isinstance(block.get("input"), Mapping):
        raise invalid(f"{where}.input", "expected an object")
    arguments = json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False)
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }


def _tool_result(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
        raise invalid(f"{where}.tool_use_id", "expected a non-empty string")
    content = block.get("content", "")
    text = content if isinstance(content, str) else _texts(content, f"{where}.content")
    if block.get("is_error") is True:
        text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": text}


def _text(content: Any, where: str) -> str:
    return content if isinstance(content, str) else _texts(content, f"{where}.content")


def _texts(content: Any, where: str) -> str:
    """A list of text blocks, joined by a line break."""
    texts = []
    for position, block in enumerate(_blocks(content, where)):
        at = f"{where}[{position}]"
        if block["type"] != "text":
            raise invalid(f"{at}.type", _refused_block(block["type"], "text"))
        texts.append(_block_text(block, at))
    return "\n".join(texts)


def _blocks(content: Any, where: str) -> list[Mapping[str, Any]]:
    """A non-empty list of content blocks, each an object with a ``type`` and a well-formed
    ``cache_control`` where it has one."""
    if not isinstance(content, list) or not content:
        raise invalid(where, "expected a string or a non-empty list of content blocks")
    for position, block in enumerate(content):
        at = f"{where}[{position}]"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise invalid(f"{at}.type", "expected a content block with a type")
        cache_control_check(block, at)
    return content


def _block_text(block: Mapping[str, Any], where: str) -> str:
    if not isinstance(block.get("text"), str):
        raise invalid(f"{where}.text", "expected a string")
    return str(block["text"])


def _refused_block(kind: str, accepted: str) -> str:
    return _NOT_CARRIED.get(kind, f"only {accepted} blocks are accepted here, not {kind!r}")


def cache_control_check(item: Mapping[str, Any], where: str) -> None:
    """``cache_control``, where given, is Anthropic's ``{"type": "ephemeral"}`` (with an optional
    ``ttl``); it is accepted and never forwarded as given (see the module docstring)."""
    marker = item.get("cache_control")
    if marker is None:
        return
    if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
        raise invalid(f"{where}.cache_control", 'expected {"type": "ephemeral"}')
    if marker.get("ttl") not in (None, "5m", "1h"):
        raise invalid(f"{where}.cache_control.ttl", 'must be "5m" or "1h"')


def chat_tools(raw: Any) -> list[dict[str, Any]] | None:
    """Anthropic's custom tools as chat function tools; a server tool (``web_search_…``,
    ``bash_…``) is a 400 naming it: nothing here runs a tool."""
    if raw is None:
        return None
    tools = []
    for index, tool in enumerate(raw):
        where = f"tools[{index}]"
        if not isinstance(tool, Mapping):
            raise invalid(where, "expected an object")
        if tool.get("type") not in (None, "custom"):
            raise invalid(f"{where}.type", f"only custom tools are supported, not {tool.get('type')!r}")
        cache_control_check(tool, where)
        function: dict[str, Any] = {"name": tool.get("name"), "parameters": tool.get("input_schema")}
        if tool.get("description") is not None:
            function["description"] = tool["description"]
        if tool.get("strict") is not None:
            function["strict"] = tool["strict"]
        tools.append({"type": "function", "function": function})
    return tools


def chat_tool_choice(raw: Any) -> Any:
    """Anthropic's ``tool_choice`` in chat form: ``auto``, ``any`` (``required``), ``none``, or
    ``{"type": "tool", "name"}`` as a function choice. ``disable_parallel_tool_use`` is accepted: a
    reply may still call several tools, which the caller answers in one message as usual."""
    if raw is None:
        return None
    kind = raw.get("type") if isinstance(raw, Mapping) else None
    if kind in _TOOL_CHOICES:
        return _TOOL_CHOICES[kind]
    if kind == "tool" and isinstance(raw.get("name"), str):
        return {"type": "function", "function": {"name": raw["name"]}}
    raise invalid(
        "tool_choice", 'expected {"type": "auto" | "any" | "none"} or {"type": "tool", "name": ...}'
    )


def output_format(raw: Any) -> dict[str, Any] | None:
    """``output_config.format`` (Anthropic's structured output) as a chat ``response_format``."""
    form = raw.get("format") if isinstance(raw, Mapping) else None
    if form is None:
        return None
    if (
        not isinstance(form, Mapping)
        or form.get("type") != "json_schema"
        or not isinstance(form.get("schema"), Mapping)
    ):
        raise invalid("output_config.format", 'expected {"type": "json_schema", "schema": {...}}')
    return {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": form["schema"], "strict": True},
    }
