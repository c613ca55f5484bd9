"""A caller's conversation in OpenAI's ``messages`` shape, made into the per-request part of a send.

Shared by ``/api/openai/v1/chat/completions`` and the native API's ``messages`` field, so both are
governed alike. Where each message goes (the assembly's order, docs/architecture.md, stays as it is):

* leading ``system`` and ``developer`` messages are **caller context**, each labelled with its role in
  the first user message, after the configuration's system prompt and snippets. Only where the
  configuration allows a system override (``Configuration.allow_system_override``) do they replace
  its system prompt instead (its snippets still follow); their source is then caller context too;
* the first ``user`` message is the task input. Every message before it must be a system or
  developer message;
* everything after it is the transcript: ``assistant`` messages (with their ``tool_calls``), ``tool``
  results and later ``user`` turns. A later ``system`` or ``developer`` message is carried as a user
  message labelled with its role: a system message after the head would pass as the configuration's;
* every caller message is a classified source named by its position (``messages[3]``): its class is
  the message's ``data_class`` (an extension field), else the request's default class (a header or
  the native API's ``input_data_class``), else the client's default. The caller's tools, response
  format and stop sequences are sources too (``tools``, ``response_format``, ``stop``), of the
  request's default class.

Content is a string or a list of parts: text parts (joined with a line break), and in ``user``
messages ``image_url`` and ``file`` (PDF) parts, read into their bytes by :mod:`agents.runtime.media`
(remote URLs only where the configuration allows it). Each image or file is a source of its own
``data_class`` (an extension field on the part), else its message's, named by its place
(``messages[0].content[1]``). Audio and other parts are refused with :class:`InvalidMessage` naming
the field, as is every unknown role or key.
The caller's ``tools`` are offered instead of the configuration's (the caller runs them; nothing here
executes a tool), with ``tool_choice`` checked against them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agents.runtime.media import file_part, image_part
from agents.runtime.request import MediaInput, SendRequest, TranscriptEntry
from config.caches import cache_register
from config.lru import LruCache
from context_assembly.assembly import ContextItem, context_item_text
from context_assembly.errors import InvalidMessage
from context_assembly.messages import Message, TextPart, ThinkingBlock, ToolSpec
from governance.vocabulary import DataClass
from providers.values import NO_OPTIONS, TOOL_CHOICE_MODES, CallOptions
from skills.models import Skill

SYSTEM_ROLES = ("system", "developer")
DATA_CLASS_FIELD = "data_class"
# An assistant message's thinking blocks (the Anthropic API's, given back as they came): a list of
# {"thinking", "signature"} or {"data"} objects.
THINKING_FIELD = "thinking"
_CLASSES = frozenset(DataClass.values)
_MEDIA_KINDS = ("image_url", "file")

# A client sends its whole conversation again with every turn, so each earlier message arrives again.
# A plain message (a role, a text content, a name and a tool call id, nothing else) is parsed once and
# the same Message handed to every request that sends it again: what is kept by a Message's identity
# downstream (its screening, its redaction, its digest for the token count) is then found, not done
# again, for every message the conversation already held.
_PLAIN_FIELDS = frozenset({"role", "content", "name", "tool_call_id"})
PLAIN_MESSAGE_MAX_CHARS = 262_144
_PLAIN_MESSAGES: LruCache[tuple[str, str, str | None, str | None], Message] = cache_register(
    LruCache(16_384),
    name="plain_messages",
    key="a plain wire message's role, text content (up to 262,144 characters), name and tool call id",
    invalidation="none needed: parsing is a pure function of the message; Messages are immutable",
)


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a caller sent besides the messages, as the send needs it."""

    default_class: str
    allow_system_override: bool = False
    caller_context: tuple[ContextItem, ...] = ()
    tools: Sequence[Any] | None = None
    tool_choice: Any = None
    options: CallOptions = NO_OPTIONS
    request_skills: tuple[Skill, ...] = ()
    allow_remote_media: bool = False


def invalid(field_path: str, problem: str) -> InvalidMessage:
    return InvalidMessage(f"{field_path}: {problem}", extra={"field": field_path})


def conversation_request(messages: Sequence[Any], conversation: Conversation) -> SendRequest:
    """The :class:`SendRequest` of ``messages`` (raw JSON objects in OpenAI's shape). Raises
    :class:`InvalidMessage` naming the field (``messages[2].content[0].type``), never its content."""
    if not messages:
        raise invalid("messages", "must hold at least one message")
    parsed = [_parse(raw, index, conversation) for index, raw in enumerate(messages)]
    first_user = next((i for i, (message, *_) in enumerate(parsed) if message.role == "user"), None)
    if first_user is None or any(role not in SYSTEM_ROLES for _, role, *_ in parsed[:first_user]):
        raise invalid(
            "messages", "the conversation must start with a user message, after any system messages"
        )
    leading = [
        ContextItem(role, _text(message), data_class, identifier=f"messages[{index}]")
        for index, (message, role, data_class, *_) in enumerate(parsed[:first_user])
    ]
    task, _, task_class, task_media, _ = parsed[first_user]
    later = parsed[first_user + 1 :]
    transcript = tuple(
        _transcript_entry(index, *message) for index, message in enumerate(later, start=first_user + 1)
    )
    tools = _tools(conversation.tools)
    override = conversation.allow_system_override
    return SendRequest(
        task_input=_text(task),
        input_data_class=task_class,
        task_input_identifier=f"messages[{first_user}]",
        caller_context=conversation.caller_context + (() if override else tuple(leading)),
        system_override=tuple(leading) if override else (),
        transcript=transcript,
        request_skills=conversation.request_skills,
        client_tools=tools,
        client_tools_class=conversation.default_class,
        options=_with_tool_choice(conversation.options, conversation.tool_choice, tools),
        task_input_media=task_media,
        transcript_media=tuple(media for *_, message_media, _ in later for media in message_media),
    )


# A parsed message: the Message, its role as sent, its class, its images and files, and whether it is
# the one :data:`_PLAIN_MESSAGES` keeps (so it outlives this request).
_Parsed = tuple[Message, str, str, tuple[MediaInput, ...], bool]


def _parse(raw: Any, index: int, conversation: Conversation) -> _Parsed:
    """The message at ``index`` with its role as sent (``developer`` is a system message), its class
    and its images and files (only a user message may hold any), and whether it is kept.

    A plain message already kept (an earlier turn of the conversation, sent again) is found without
    the checks its first parse made; a ``developer`` message is kept under its role ``system``."""
    plain_as_sent = type(raw) is dict and raw.keys() <= _PLAIN_FIELDS and raw.get("role") != "developer"
    asked = _plain_key(raw) if plain_as_sent else None
    if asked is not None:
        kept = _PLAIN_MESSAGES.get(asked)
        if kept is not None:
            return kept, kept.role, conversation.default_class, (), True
    where = f"messages[{index}]"
    default_class = conversation.default_class
    if not isinstance(raw, Mapping):
        raise invalid(where, f"expected an object, got {type(raw).__name__}")
    fields = dict(raw)
    data_class = fields.pop(DATA_CLASS_FIELD, None)
    if data_class is None:
        data_class = default_class
    elif data_class not in _CLASSES:
        raise invalid(f"{where}.{DATA_CLASS_FIELD}", f"must be one of {', '.join(sorted(_CLASSES))}")
    role = fields.get("role")
    if role == "developer":
        fields["role"] = "system"
    thinking = _thinking(fields.pop(THINKING_FIELD, None), f"{where}.{THINKING_FIELD}", role)
    media: tuple[MediaInput, ...] = ()
    if isinstance(fields.get("content"), list):
        fields["content"], media = _content_parts(
            fields["content"], f"{where}.content", data_class, conversation, user=role == "user"
        )
    plain = _plain_key(fields)
    try:
        message = (
            Message.from_openai(fields)
            if plain is None
            else _PLAIN_MESSAGES.put_absent(plain, Message.from_openai(fields))
            if plain == asked  # missed just now
            else _PLAIN_MESSAGES.get_or_build(plain, lambda: Message.from_openai(fields))
        )
    except InvalidMessage as exc:
        raise invalid(f"{where}.{exc.extra.get('field', 'message')}", _problem(exc)) from None
    if thinking:
        return replace(message, thinking=thinking), str(role), data_class, media, False
    return message, str(role), data_class, media, plain is not None and _plain_held(message)


def _plain_key(fields: dict[str, Any]) -> tuple[str, str, str | None, str | None] | None:
    """The key of a plain message in :data:`_PLAIN_MESSAGES`; None for any other (parsed anew)."""
    if not fields.keys() <= _PLAIN_FIELDS:
        return None
    role, content = fields.get("role"), fields.get("content")
    name, call_id = fields.get("name"), fields.get("tool_call_id")
    if type(role) is not str or type(content) is not str or len(content) > PLAIN_MESSAGE_MAX_CHARS:
        return None
    if not (name is None or type(name) is str) or not (call_id is None or type(call_id) is str):
        return None
    return role, content, name, call_id


def _plain_held(message: Message) -> bool:
    """Whether ``message`` is the one :data:`_PLAIN_MESSAGES` keeps for its fields (so it outlives
    this request, and what is remembered by its identity stays valid)."""
    if not isinstance(message.content, str) or message.tool_calls or message.thinking:
        return False
    key = (message.role, message.content, message.name, message.tool_call_id)
    return _PLAIN_MESSAGES.peek(key) is message


def _thinking(raw: Any, where: str, role: Any) -> tuple[ThinkingBlock, ...]:
    """An assistant message's thinking blocks; anything else there is a 400 naming the field."""
    if raw is None:
        return ()
    if role != "assistant" or not isinstance(raw, list):
        raise invalid(where, "a list of thinking blocks, on assistant messages only")
    blocks = []
    for index, item in enumerate(raw):
        fields = dict(item) if isinstance(item, Mapping) else {}
        if not fields or set(fields) - {"thinking", "signature", "data"}:
            raise invalid(f"{where}[{index}]", "expected thinking and signature, or data")
        if not all(isinstance(value, str) for value in fields.values()):
            raise invalid(f"{where}[{index}]", "expected strings")
        blocks.append(ThinkingBlock(**fields))
    return tuple(blocks)


def _content_parts(
    parts: list[Any], where: str, data_class: str, conversation: Conversation, *, user: bool
) -> tuple[str, tuple[MediaInput, ...]]:
    """The text of ``parts`` (text parts joined by a line break) and their images and files."""
    texts, media = [], []
    for position, part in enumerate(parts):
        at = f"{where}[{position}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
            continue
        if kind not in _MEDIA_KINDS:
            raise invalid(f"{at}.type", "only text, image_url and file parts are accepted")
        if not user:
            raise invalid(f"{at}.type", f"{kind} parts are accepted in user messages only")
        media.append(_media(part, at, data_class, conversation))
    if not texts and not media:
        raise invalid(where, "a content part list must not be empty")
    return "\n".join(texts), tuple(media)


def _media(part: Mapping[str, Any], at: str, data_class: str, conversation: Conversation) -> MediaInput:
    declared = part.get(DATA_CLASS_FIELD)
    if declared is not None and declared not in _CLASSES:
        raise invalid(f"{at}.{DATA_CLASS_FIELD}", f"must be one of {', '.join(sorted(_CLASSES))}")
    kind = part["type"]
    body = part.get(kind)
    if not isinstance(body, Mapping):
        raise invalid(f"{at}.{kind}", "expected an object")
    read = image_part if kind == "image_url" else file_part
    media = read(body, f"{at}.{kind}", allow_remote=conversation.allow_remote_media)
    return MediaInput(media, declared or data_class, at)


def _problem(exc: InvalidMessage) -> str:
    field_path = str(exc.extra.get("field", ""))
    message = exc.message
    return message[len(field_path) + 2 :] if field_path and message.startswith(f"{field_path}: ") else message


def _text(message: Message) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def _transcript_entry(
    index: int, message: Message, role: str, data_class: str, media: tuple[MediaInput, ...], kept: bool
) -> TranscriptEntry:
    """The caller's message at ``index`` of the transcript, held where it is sent as it was parsed and
    kept (``kept``: the Message :data:`_PLAIN_MESSAGES` holds)."""
    sent = _transcript_message(message, role, media)
    held = kept and sent is message
    return TranscriptEntry(sent, data_class, caller=True, identifier=f"messages[{index}]", held=held)


def _transcript_message(message: Message, role: str, media: tuple[MediaInput, ...] = ()) -> Message:
    if media:
        text = (TextPart(_text(message)),) if _text(message) else ()
        return replace(message, content=text + tuple(item.part for item in media))
    if message.role != "system":
        return message
    return Message(role="user", content=context_item_text(ContextItem(role, _text(message), "")))


def _tools(raw: Sequence[Any] | None) -> tuple[ToolSpec, ...] | None:
    """The caller's tools; None (no ``tools`` field at all) keeps the configuration's."""
    if raw is None:
        return None
    specs = []
    for index, item in enumerate(raw):
        try:
            specs.append(ToolSpec.from_openai(item))
        except InvalidMessage as exc:
            raise invalid(f"tools[{index}].{exc.extra.get('field', 'tool')}", _problem(exc)) from None
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise invalid("tools", "function names must be unique")
    return tuple(specs)


def _with_tool_choice(options: CallOptions, choice: Any, tools: tuple[ToolSpec, ...] | None) -> CallOptions:
    if choice is None:
        return options
    if not tools:
        raise invalid("tool_choice", "is only allowed when tools are given")
    if isinstance(choice, str):
        if choice not in TOOL_CHOICE_MODES:
            raise invalid("tool_choice", f"must be one of {', '.join(TOOL_CHOICE_MODES)} or a function")
        return replace(options, tool_choice=choice)
    function = choice.get("function") if isinstance(choice, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(choice, Mapping) or choice.get("type") != "function" or not isinstance(name, str):
        raise invalid("tool_choice", 'expected {"type": "function", "function": {"name": ...}}')
    if name not in {spec.name for spec in tools}:
        raise invalid("tool_choice.function.name", "names no tool of the request")
    return replace(options, tool_choice={"type": "function", "function": {"name": name}})
