"""Chat messages and tool specs as they cross the context-assembly seam.

Every type here is a frozen, hashable dataclass, validated on construction, with ``to_openai()`` (the
OpenAI Chat Completions wire shape) and ``from_openai()`` (which validates untrusted input and raises
:class:`~context_assembly.errors.InvalidMessage` naming the offending field, never its content).

Representation choices, because hashability shapes them:

* ``Message.content`` is a ``str`` or a ``tuple`` of :class:`TextPart` / :class:`ImagePart` /
  :class:`FilePart` (``context_assembly/parts.py``; a list given to the constructor becomes a tuple).
* ``ToolSpec.parameters`` is stored as a read-only :class:`FrozenMapping` (JSON arrays become tuples),
  so a spec can be hashed and used as a cache key; ``to_openai()`` returns plain dicts and lists again.
* An assistant message that only carries tool calls has ``content == ""``; on the wire that is
  ``"content": null``, as the API expects.

Content the estimator could not count (audio, refusals, unknown part types, a file part without its
bytes read) is rejected rather than carried along uncounted: an estimate that silently skips a part would under-report the window.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from context_assembly.parts import IMAGE_DETAILS as IMAGE_DETAILS
from context_assembly.parts import MEDIA_PARTS, ContentPart, FilePart, ImagePart, TextPart
from context_assembly.parts import invalid as _invalid
from context_assembly.parts import require_str as _require_str

__all__ = ["ContentPart", "FilePart", "ImagePart", "Message", "TextPart", "ToolCall", "ToolSpec"]

ROLES = ("system", "user", "assistant", "tool")

# OpenAI's rule for function names: letters, digits, underscores and dashes, at most 64 characters.
_FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MESSAGE_KEYS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})


def _fields_digest(message: Message, content: str) -> bytes:
    hasher = hashlib.sha256(b"text:")
    fields: list[str | None] = [message.role, message.name, content, message.tool_call_id]
    for call in message.tool_calls:
        fields += [call.id, call.name, call.arguments]
    for value in fields:
        if value is None:
            hasher.update(b"\x00")
            continue
        data = value.encode("utf-8", "surrogatepass")
        hasher.update(b"\x01" + len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.digest()


def _require_mapping(value: object, field_path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _invalid(field_path, f"expected an object, got {type(value).__name__}")
    return value


def _reject_unknown_keys(data: Mapping[str, Any], allowed: frozenset[str], field_path: str) -> None:
    # A key we do not model would be dropped from the wire payload without a word; refuse it instead.
    # Keys whose value is null (e.g. "refusal": null on a returned assistant message) carry nothing.
    unknown = sorted(key for key, value in data.items() if key not in allowed and value is not None)
    if unknown:
        raise _invalid(f"{field_path}{unknown[0]}", "is not a supported field")


class FrozenMapping(Mapping[str, Any]):
    """A read-only, hashable JSON object. Equal to any mapping with the same items; keeps key order."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"FrozenMapping({self._items!r})"


def freeze_json(value: object, field_path: str) -> Any:
    """``value`` with objects as :class:`FrozenMapping` and arrays as tuples; rejects non-JSON values."""
    if isinstance(value, Mapping):
        frozen = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _invalid(field_path, "object keys must be strings")
            frozen[key] = freeze_json(item, f"{field_path}.{key}")
        return FrozenMapping(frozen)
    if isinstance(value, list | tuple):
        return tuple(freeze_json(item, f"{field_path}[{index}]") for index, item in enumerate(value))
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise _invalid(field_path, f"{type(value).__name__} is not a JSON value")


def thaw_json(value: Any) -> Any:
    """The plain ``dict`` / ``list`` form of a value built by :func:`freeze_json`."""
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call requested by the assistant. ``arguments`` is the raw JSON text, not parsed."""

    id: str
    name: str
    arguments: str

    def __post_init__(self) -> None:
        _require_str(self.id, "tool_calls.id", allow_empty=False)
        _require_str(self.name, "tool_calls.function.name", allow_empty=False)
        _require_str(self.arguments, "tool_calls.function.arguments")

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_openai(cls, raw: object, field_path: str = "tool_calls[0]") -> ToolCall:
        data = _require_mapping(raw, field_path)
        _reject_unknown_keys(data, frozenset({"id", "type", "function"}), f"{field_path}.")
        if data.get("type", "function") != "function":
            raise _invalid(f"{field_path}.type", "only function tool calls are supported")
        function = _require_mapping(data.get("function"), f"{field_path}.function")
        _reject_unknown_keys(function, frozenset({"name", "arguments"}), f"{field_path}.function.")
        return cls(
            id=_require_str(data.get("id"), f"{field_path}.id", allow_empty=False),
            name=_require_str(function.get("name"), f"{field_path}.function.name", allow_empty=False),
            arguments=_require_str(function.get("arguments", ""), f"{field_path}.function.arguments"),
        )


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """A model's extended thinking, given back on the next turn exactly as it came (its provider
    checks ``signature`` against ``thinking``); a ``redacted_thinking`` block carries only ``data``,
    opaque. A block whose text was redacted on its way to the caller has no signature: it cannot be
    proved, so it is not sent back (``providers/anthropic_messages.py``)."""

    thinking: str = ""
    signature: str = ""
    data: str = ""


def _part_from_openai(raw: object, field_path: str) -> ContentPart:
    data = _require_mapping(raw, field_path)
    kind = data.get("type")
    if kind == "text":
        _reject_unknown_keys(data, frozenset({"type", "text"}), f"{field_path}.")
        return TextPart(text=_require_str(data.get("text"), f"{field_path}.text"))
    if kind == "image_url":
        _reject_unknown_keys(data, frozenset({"type", "image_url"}), f"{field_path}.")
        image = _require_mapping(data.get("image_url"), f"{field_path}.image_url")
        _reject_unknown_keys(image, frozenset({"url", "detail"}), f"{field_path}.image_url.")
        detail = image.get("detail") or "auto"
        if detail not in IMAGE_DETAILS:
            raise _invalid(f"{field_path}.image_url.detail", f"must be one of {', '.join(IMAGE_DETAILS)}")
        return ImagePart(url=_require_str(image.get("url"), f"{field_path}.image_url.url"), detail=detail)
    if kind == "file":
        # A file part is counted by its pages and extracted text, read from its bytes by whoever
        # accepts it from a caller (agents/runtime/media.py); a bare wire part has neither.
        raise _invalid(f"{field_path}.type", "a file part must be read from its bytes before it is sent")
    raise _invalid(f"{field_path}.type", f"unsupported content part type {kind!r}")


@dataclass(frozen=True)
class Message:
    """One chat message. Invariants (checked on construction):

    * ``role`` is one of :data:`ROLES`; ``tool_call_id`` is set exactly on ``tool`` messages;
    * ``tool_calls`` only on ``assistant`` messages; ``name`` never on ``tool`` messages;
    * image and file parts only in ``user`` content; a part list is never empty.
    """

    role: str
    content: str | tuple[ContentPart, ...]
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    # An assistant turn's thinking blocks, first on the wire (Anthropic); other wires do not carry them.
    thinking: tuple[ThinkingBlock, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise _invalid("role", f"must be one of {', '.join(ROLES)}")
        if isinstance(self.content, list):
            object.__setattr__(self, "content", tuple(self.content))
        if isinstance(self.tool_calls, list):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        self._check_content()
        self._check_fields()

    def _check_content(self) -> None:
        if isinstance(self.content, str):
            return
        if not isinstance(self.content, tuple):
            raise _invalid("content", "expected a string or a list of content parts")
        if not self.content:
            raise _invalid("content", "a content part list must not be empty")
        for index, part in enumerate(self.content):
            if not isinstance(part, TextPart | ImagePart | FilePart):
                raise _invalid(f"content[{index}]", "expected a text, image or file part")
            if isinstance(part, MEDIA_PARTS) and self.role != "user":
                raise _invalid(
                    f"content[{index}]", f"{part.modality} parts are not allowed in {self.role} messages"
                )

    def _check_fields(self) -> None:
        if self.name is not None:
            _require_str(self.name, "name", allow_empty=False)
            if self.role == "tool":
                raise _invalid("name", "tool messages carry no name")
        if any(not isinstance(call, ToolCall) for call in self.tool_calls):
            raise _invalid("tool_calls", "expected ToolCall items")
        if self.tool_calls and self.role != "assistant":
            raise _invalid("tool_calls", "only assistant messages carry tool calls")
        object.__setattr__(self, "thinking", tuple(self.thinking))
        if self.thinking and (
            self.role != "assistant" or any(not isinstance(b, ThinkingBlock) for b in self.thinking)
        ):
            raise _invalid("thinking", "only assistant messages carry thinking blocks")
        if self.role == "tool":
            _require_str(self.tool_call_id, "tool_call_id", allow_empty=False)
        elif self.tool_call_id is not None:
            raise _invalid("tool_call_id", "only tool messages carry a tool_call_id")

    def to_openai(self) -> dict[str, Any]:
        """The message as the Chat Completions API expects it (a fresh dict each call)."""
        content: Any
        if isinstance(self.content, str):
            content = None if (self.content == "" and self.tool_calls) else self.content
        else:
            content = [part.to_openai() for part in self.content]
        wire: dict[str, Any] = {"role": self.role, "content": content}
        if self.name is not None:
            wire["name"] = self.name
        if self.tool_calls:
            wire["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            wire["tool_call_id"] = self.tool_call_id
        return wire

    @cached_property
    def digest(self) -> bytes:
        """SHA-256 identifying the message's content for the token cache; computed once per instance.

        Text messages (the common case) hash their fields directly, each length-prefixed and with a
        presence flag for optional ones, so no two different messages share an input; this is several
        times cheaper than serialising JSON. Multimodal messages hash their canonical form (wire shape
        plus image sizes, sorted keys, compact JSON). The two forms are domain-separated.
        """
        if isinstance(self.content, str):
            return _fields_digest(self, self.content)
        canonical = self.to_openai()
        if isinstance(self.content, tuple):
            canonical["image_sizes"] = [
                [part.width, part.height] for part in self.content if isinstance(part, ImagePart)
            ]
            canonical["file_pages"] = [part.pages for part in self.content if isinstance(part, FilePart)]
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(b"json:" + text.encode("utf-8", "surrogatepass")).digest()

    @property
    def modalities(self) -> frozenset[str]:
        """The input modalities the message's parts need (``image``, ``pdf``); empty for text."""
        if isinstance(self.content, str):
            return frozenset()
        return frozenset(part.modality for part in self.content if isinstance(part, MEDIA_PARTS))

    @classmethod
    def from_openai(cls, raw: object) -> Message:
        """Parse and validate one wire message. Raises :class:`InvalidMessage` naming the field."""
        data = _require_mapping(raw, "message")
        _reject_unknown_keys(data, _MESSAGE_KEYS, "")
        role = _require_str(data.get("role"), "role")
        raw_calls = data.get("tool_calls") or []
        if not isinstance(raw_calls, list | tuple):
            raise _invalid("tool_calls", "expected a list")
        calls = tuple(ToolCall.from_openai(call, f"tool_calls[{i}]") for i, call in enumerate(raw_calls))
        raw_content = data.get("content")
        if raw_content is None:
            if not (role == "assistant" and calls):
                raise _invalid("content", "is required unless an assistant message carries tool calls")
            content: str | tuple[ContentPart, ...] = ""
        elif isinstance(raw_content, str):
            content = raw_content
        elif isinstance(raw_content, list | tuple):
            content = tuple(_part_from_openai(part, f"content[{i}]") for i, part in enumerate(raw_content))
        else:
            raise _invalid("content", "expected a string or a list of content parts")
        return cls(
            role=role,
            content=content,
            name=data.get("name"),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
        )


@dataclass(frozen=True)
class ToolSpec:
    """A function tool offered to the model. ``parameters`` is a JSON Schema object, stored frozen."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: FrozenMapping({}))
    strict: bool | None = None

    def __post_init__(self) -> None:
        _require_str(self.name, "function.name", allow_empty=False)
        if self.strict is not None and not isinstance(self.strict, bool):
            raise _invalid("function.strict", "expected a boolean")
        if not _FUNCTION_NAME.match(self.name):
            raise _invalid("function.name", "must be 1-64 letters, digits, underscores or dashes")
        _require_str(self.description, "function.description")
        _require_mapping(self.parameters, "function.parameters")
        frozen = freeze_json(self.parameters, "function.parameters")
        if "properties" in frozen and not isinstance(frozen["properties"], Mapping):
            raise _invalid("function.parameters.properties", "expected an object")
        object.__setattr__(self, "parameters", frozen)

    def to_openai(self) -> dict[str, Any]:
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        function["parameters"] = thaw_json(self.parameters)
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}

    @cached_property
    def digest(self) -> bytes:
        """SHA-256 of the canonical JSON form; computed once per instance."""
        text = json.dumps(self.to_openai(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).digest()

    @classmethod
    def from_openai(cls, raw: object) -> ToolSpec:
        """Accepts ``{"type": "function", "function": {...}}`` or the bare function object."""
        data = _require_mapping(raw, "tool")
        if "function" in data or "type" in data:
            _reject_unknown_keys(data, frozenset({"type", "function"}), "")
            if data.get("type") != "function":
                raise _invalid("type", "only function tools are supported")
            data = _require_mapping(data.get("function"), "function")
        _reject_unknown_keys(data, frozenset({"name", "description", "parameters", "strict"}), "function.")
        return cls(
            name=_require_str(data.get("name"), "function.name", allow_empty=False),
            description=_require_str(data.get("description", ""), "function.description"),
            parameters=_require_mapping(data.get("parameters", {}), "function.parameters"),
            strict=data.get("strict"),
        )
