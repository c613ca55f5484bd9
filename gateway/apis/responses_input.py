"""A Responses API request (``/api/openai/v1/responses``) as the conversation a chat completion
governs: the same :func:`agents.runtime.conversation.conversation_request`, so both are governed alike.

* ``instructions`` is a leading system message: caller context (or, where the configuration allows a
  system override, the system prompt), as a chat completion's system message is. It is not carried
  over to a continuation, as OpenAI's API does not carry it;
* ``input`` (a string: one user message; or a list of items) becomes chat messages: ``message`` items
  (roles user, system, developer, assistant; text parts, and ``input_image`` / ``input_file`` parts
  as the chat path's ``image_url`` / ``file`` parts), ``function_call`` items (an assistant
  message's tool calls; consecutive calls are one message) and ``function_call_output`` items (tool
  messages). Every other item type is a 400 naming the item;
* with ``previous_response_id``, the stored conversation of that response comes first: the caller's
  own earlier messages at the classes they were sent as, and each earlier reply as a source of kind
  ``assistant_turn`` at its labels (docs/decisions/0018-reply-labels-and-receivers.md), as an
  earlier assistant turn is in a run;
* sources are named by where they came from: ``instructions``, ``input[2]``, ``previous[0]`` (the
  stored conversation's caller messages) and ``resp_….output`` (an earlier reply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agents.runtime.conversation import DATA_CLASS_FIELD, Conversation, conversation_request, invalid
from agents.runtime.request import SendRequest
from context_assembly.assembly import ContextItem
from context_assembly.errors import InvalidMessage

CALLER = "caller"
ASSISTANT_TURN = "assistant_turn"
_MESSAGE_ROLES = ("user", "system", "developer", "assistant")
_TEXT_PARTS = ("input_text", "output_text", "text")
_MEDIA_PARTS = ("input_image", "input_file")


@dataclass(frozen=True)
class Entry:
    """One chat message of a Responses conversation, with how it is classified and named."""

    message: dict[str, Any]
    data_class: str
    name: str
    kind: str = CALLER
    receiver_class: str | None = None
    observed: bool = False

    def stored(self) -> dict[str, Any]:
        """The entry as a stored response keeps it (``StoredResponse.conversation``)."""
        return {
            "message": self.message,
            "data_class": self.data_class,
            "receiver_class": self.receiver_class,
            "observed": self.observed,
            "kind": self.kind,
            "name": self.name,
        }

    @classmethod
    def from_stored(cls, raw: Mapping[str, Any], *, name: str) -> Entry:
        """A stored entry; a caller's message named ``name`` (its place in the stored conversation),
        a reply by the response it came from (``resp_….output``)."""
        kind = str(raw["kind"])
        return cls(
            message=dict(raw["message"]),
            data_class=str(raw["data_class"]),
            name=str(raw["name"]) if kind == ASSISTANT_TURN else name,
            kind=kind,
            receiver_class=raw.get("receiver_class"),
            observed=bool(raw.get("observed")),
        )


@dataclass(frozen=True)
class ResponsesConversation:
    """What the send is built from: the instructions, the stored conversation, the new input."""

    instructions: str | None
    previous: tuple[Entry, ...] = ()
    new: tuple[Entry, ...] = ()

    @property
    def entries(self) -> tuple[Entry, ...]:
        head = (Entry({"role": "system", "content": self.instructions}, "", "instructions"),)
        return (head if self.instructions else ()) + self.previous + self.new


def input_entries(raw: Any, default_class: str) -> tuple[Entry, ...]:
    """The chat messages of ``input``; raises :class:`InvalidMessage` naming the item."""
    if isinstance(raw, str):
        return (Entry({"role": "user", "content": raw}, default_class, "input"),)
    if not isinstance(raw, list) or not raw:
        raise invalid("input", "expected a string or a non-empty list of items")
    entries: list[Entry] = []
    for index, item in enumerate(raw):
        where = f"input[{index}]"
        if not isinstance(item, Mapping):
            raise invalid(where, f"expected an object, got {type(item).__name__}")
        data_class = item.get(DATA_CLASS_FIELD) or default_class
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            entries.append(Entry(_message(item, where), data_class, where))
        elif kind == "function_call":
            call = _function_call(item, where)
            last = entries[-1] if entries else None
            if last is not None and last.message["role"] == "assistant" and last.data_class == data_class:
                merged = {**last.message, "tool_calls": [*last.message.get("tool_calls", []), call]}
                entries[-1] = replace(last, message=merged)
            else:
                entries.append(
                    Entry({"role": "assistant", "content": None, "tool_calls": [call]}, data_class, where)
                )
        elif kind == "function_call_output":
            entries.append(Entry(_function_output(item, where), data_class, where))
        else:
            raise invalid(
                f"{where}.type", "only message, function_call and function_call_output items are accepted"
            )
    return tuple(entries)


def send_request(conversation: ResponsesConversation, chat: Conversation) -> SendRequest:
    """The send of ``conversation``: the chat path's request, its sources renamed to their origin and
    each earlier reply made an ``assistant_turn`` source at its labels."""
    entries = conversation.entries
    messages = [
        {**entry.message, DATA_CLASS_FIELD: entry.data_class or chat.default_class} for entry in entries
    ]
    try:
        request = conversation_request(messages, chat)
    except InvalidMessage as exc:
        raise _renamed(exc, entries) from None
    names = {f"messages[{index}]": entry.name for index, entry in enumerate(entries)}
    first_user = next(i for i, entry in enumerate(entries) if entry.message["role"] == "user")
    transcript = []
    for offset, sent in enumerate(request.transcript):
        entry = entries[first_user + 1 + offset]
        if entry.kind == ASSISTANT_TURN:  # an earlier reply: sent at its labels, not as caller text
            sent = replace(
                sent,
                caller=False,
                data_class=entry.data_class,
                receiver_class=entry.receiver_class or "",
                observed=entry.observed,
            )
        transcript.append(replace(sent, identifier=entry.name))
    return replace(
        request,
        task_input_identifier=names.get(request.task_input_identifier, request.task_input_identifier),
        caller_context=tuple(_renamed_item(item, names) for item in request.caller_context),
        system_override=tuple(_renamed_item(item, names) for item in request.system_override),
        transcript=tuple(transcript),
    )


def _renamed_item(item: ContextItem, names: Mapping[str, str]) -> ContextItem:
    return replace(item, identifier=names.get(item.identifier or "", item.identifier))


def _renamed(exc: InvalidMessage, entries: Sequence[Entry]) -> InvalidMessage:
    """The conversation's error named by the item it came from (``input[2].content``)."""
    path = str(exc.extra.get("field", ""))
    for index, entry in enumerate(entries):
        prefix = f"messages[{index}]"
        if path == prefix or path.startswith(prefix + "."):
            renamed = entry.name + path[len(prefix) :]
            return InvalidMessage(exc.message.replace(path, renamed, 1), extra={"field": renamed})
    if path == "messages":
        return InvalidMessage(exc.message.replace("messages", "input", 1), extra={"field": "input"})
    return exc


def _message(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    role = item.get("role")
    if role not in _MESSAGE_ROLES:
        raise invalid(f"{where}.role", f"must be one of {', '.join(_MESSAGE_ROLES)}")
    return {"role": role, "content": _content(item.get("content"), f"{where}.content")}


def _content(content: Any, where: str) -> str | list[dict[str, Any]]:
    """A message's content: its text, or, when it holds ``input_image`` / ``input_file`` parts, the
    chat parts (``image_url``, ``file``) the conversation reads them from."""
    if not isinstance(content, list) or not any(
        isinstance(part, Mapping) and part.get("type") in _MEDIA_PARTS for part in content
    ):
        return _text(content, where)
    return [_chat_part(part, f"{where}[{position}]") for position, part in enumerate(content)]


def _chat_part(part: Any, where: str) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
        chat: dict[str, Any] = {"type": "text", "text": part["text"]}
    elif kind == "input_image":
        if part.get("file_id") is not None:
            raise invalid(f"{where}.file_id", "uploaded files are not served here; send image_url")
        chat = {
            "type": "image_url",
            "image_url": {"url": part.get("image_url"), "detail": part.get("detail")},
        }
    elif kind == "input_file":
        keys = ("file_data", "file_url", "file_id", "filename")
        chat = {"type": "file", "file": {key: part[key] for key in keys if part.get(key) is not None}}
    else:
        raise invalid(f"{where}.type", "only input_text, input_image and input_file parts are accepted")
    if part.get(DATA_CLASS_FIELD) is not None:
        chat[DATA_CLASS_FIELD] = part[DATA_CLASS_FIELD]
    return chat


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        raise invalid(where, "expected a string or a non-empty list of text parts")
    texts = []
    for position, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in _TEXT_PARTS or not isinstance(part.get("text"), str):
            raise invalid(
                f"{where}[{position}].type", "only text parts (input_text, output_text) are accepted"
            )
        texts.append(part["text"])
    return "\n".join(texts)


def _function_call(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    for key in ("call_id", "name", "arguments"):
        if not isinstance(item.get(key), str):
            raise invalid(f"{where}.{key}", "expected a string")
    function = {"name": item["name"], "arguments": item["arguments"]}
    return {"id": item["call_id"], "type": "function", "function": function}


def _function_output(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(item.get("call_id"), str) or not item["call_id"]:
        raise invalid(f"{where}.call_id", "expected a non-empty string")
    return {
        "role": "tool",
        "tool_call_id": item["call_id"],
        "content": _text(item.get("output"), f"{where}.output"),
    }


@dataclass(frozen=True)
class Tools:
    """A request's tools: its function tools in chat form (None: the request named none), and the
    tools that are not offered (a ``namespace`` of functions, hosted tools such as ``web_search``:
    this service runs none), each named by type and name for the response to list."""

    offered: list[dict[str, Any]] | None
    not_offered: tuple[dict[str, Any], ...] = ()


def chat_tools(raw: Any) -> Tools:
    """Responses tools: function tools in chat form; every other tool listed as not offered (Codex
    CLI sends a ``namespace`` and ``web_search`` with its function tools). A tool that is not an
    object with a ``type`` is a 400 naming it."""
    if raw is None:
        return Tools(None)
    tools, not_offered = [], []
    for index, tool in enumerate(raw):
        kind = tool.get("type") if isinstance(tool, Mapping) else None
        if not isinstance(kind, str) or not kind:
            raise invalid(f"tools[{index}].type", "expected a tool object with a type")
        if kind != "function":
            not_offered.append(
                {"type": kind, "name": tool.get("name") if isinstance(tool.get("name"), str) else None}
            )
            continue
        function = {
            key: tool[key]
            for key in ("name", "description", "parameters", "strict")
            if tool.get(key) is not None
        }
        tools.append({"type": "function", "function": function})
    return Tools(tools, tuple(not_offered))


def chat_tool_choice(raw: Any) -> Any:
    """``tool_choice`` in chat form: a mode, or ``{"type": "function", "name"}`` as a chat function choice."""
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, Mapping) and raw.get("type") == "function" and isinstance(raw.get("name"), str):
        return {"type": "function", "function": {"name": raw["name"]}}
    raise invalid("tool_choice", 'expected "auto", "none", "required" or {"type": "function", "name": ...}')


def response_format(text: Any) -> dict[str, Any] | None:
    """``text.format`` as a chat ``response_format`` (plain text: none)."""
    if text is None:
        return None
    if not isinstance(text, Mapping):
        raise invalid("text", "expected an object")
    form = text.get("format")
    if form is None or (isinstance(form, Mapping) and form.get("type") == "text"):
        return None
    if isinstance(form, Mapping) and form.get("type") == "json_object":
        return {"type": "json_object"}
    if isinstance(form, Mapping) and form.get("type") == "json_schema":
        keys = ("name", "schema", "strict", "description")
        return {"type": "json_schema", "json_schema": {key: form[key] for key in keys if key in form}}
    raise invalid("text.format", "expected a format of type text, json_object or json_schema")
