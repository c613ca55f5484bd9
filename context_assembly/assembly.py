"""Message assembly: the order in which each part of a step's context reaches the wire (docs/architecture.md).

Order, stable prefix first so that provider prompt caches keep hitting from step to step:

1. one system message: the configuration system prompt, a blank line, the snippet block (empty parts
   are omitted; no system message at all when both are empty). Snippets are editor-authored, trusted;
2. tool specs, sent beside the messages (they are carried here and counted by the fit);
3. the first user message: the skill block (fenced untrusted data), each caller context item
   labelled with its name, then the task input, separated by blank lines. Skills are never placed
   in the system role. The caller redacts every text it passes in, names included;
4. the transcript (assistant turns, tool results, later user turns), unchanged;
5. optionally a tail note (e.g. :func:`render_tail_note`) as a final user message. Never in the
   system message: it changes every step and would invalidate the cached prefix.

:func:`assemble` is pure and O(1) in the transcript's content (it copies references only); the
transcript's structure (pairing of tool results, no system message after the head) is checked by
:func:`context_assembly.fitting.fit`, which scans it anyway and does so incrementally.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from context_assembly.errors import InvalidMessage
from context_assembly.messages import Message, ToolSpec
from context_assembly.parts import MEDIA_PARTS, ContentPart, TextPart
from context_assembly.profiles import ModelProfile
from context_assembly.usage import ContextUsage
from governance.policy import Source
from governance.vocabulary import Enforcement, Provenance, SourceKind

TASK_INPUT_IDENTIFIER = "task_input"
_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One caller-supplied context item (API field ``context[]``). ``data_class`` is the raw declared
    value; governance parses it fail-closed, so an unknown class can never widen what is sent."""

    name: str
    text: str
    data_class: str
    # How decisions and events name it; None: by its position among the items (``context[2]``). A
    # message of a caller's conversation is named by its position there (``messages[0]``).
    identifier: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidMessage("context.name: must be a non-empty string", extra={"field": "context.name"})
        if not isinstance(self.text, str):
            raise InvalidMessage("context.text: expected a string", extra={"field": "context.text"})


def _as_tuple(value: object, item_type: type | tuple[type, ...], field_name: str) -> tuple:
    items = tuple(value) if isinstance(value, list | tuple) else value
    if not isinstance(items, tuple) or not all(isinstance(item, item_type) for item in items):
        raise ValueError(f"{field_name} must be a sequence of {getattr(item_type, '__name__', 'parts')}")
    return items


@dataclass(frozen=True, slots=True)
class AssemblyInputs:
    """Everything one step's context is made of, already composed and classified by the caller.

    ``sources`` are the classified sources of the system prompt, snippets and skills; assembly adds
    the caller context items and the task input. ``task_input_parts`` (images, PDFs) follow the task
    input's text in the first user message; their sources are the caller's to give. ``transcript`` is everything after the first user
    message. Lists are accepted and stored as tuples.
    """

    profile: ModelProfile
    task_input: str
    task_input_data_class: str | None = None
    task_input_identifier: str = TASK_INPUT_IDENTIFIER
    task_input_parts: tuple[ContentPart, ...] = ()
    system_prompt: str = ""
    snippet_block: str = ""
    skill_block: str = ""
    caller_context: tuple[ContextItem, ...] = ()
    transcript: tuple[Message, ...] = ()
    tool_specs: tuple[ToolSpec, ...] = ()
    tail_note: str | None = None
    sources: tuple[Source, ...] = ()

    def __post_init__(self) -> None:
        for name in ("task_input", "system_prompt", "snippet_block", "skill_block"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string")
        if self.tail_note is not None and not isinstance(self.tail_note, str):
            raise ValueError("tail_note must be a string or None")
        for name, item_type in (
            ("task_input_parts", (TextPart, *MEDIA_PARTS)),
            ("caller_context", ContextItem),
            ("transcript", Message),
            ("tool_specs", ToolSpec),
            ("sources", Source),
        ):
            object.__setattr__(self, name, _as_tuple(getattr(self, name), item_type, name))


@dataclass(frozen=True, slots=True)
class Segments:
    """Where each part sits in :attr:`AssembledContext.messages`, and what the fit needs to attribute
    tokens of shared messages by subtraction.

    * ``messages[:head_length]`` is the HEAD (the system message, if any, and the first user message);
      ``messages[head_length:head_length + transcript_length]`` the transcript; then the tail note.
    * A probe is a message holding a leading part of a shared message; its count minus the count of
      the previous probe is that part's line. ``system_prompt_probe``: the system prompt alone (None
      when empty); ``skills_probe``: the skill block alone; ``context_probe``: the skill block plus
      the caller context items (None when there are none). When a probe would equal the whole
      message it *is* that message object, so no extra text is hashed or tokenized.
    """

    head_length: int
    transcript_length: int
    has_system_message: bool
    has_tail_note: bool
    system_prompt_probe: Message | None
    skills_probe: Message | None
    context_probe: Message | None


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The assembled messages in wire order, the tool specs and every classified source."""

    profile: ModelProfile
    messages: tuple[Message, ...]
    tool_specs: tuple[ToolSpec, ...]
    sources: tuple[Source, ...]
    segments: Segments

    @property
    def head(self) -> tuple[Message, ...]:
        return self.messages[: self.segments.head_length]

    @property
    def transcript(self) -> tuple[Message, ...]:
        start = self.segments.head_length
        return self.messages[start : start + self.segments.transcript_length]

    @property
    def tail_note(self) -> Message | None:
        return self.messages[-1] if self.segments.has_tail_note else None


def context_item_text(item: ContextItem) -> str:
    """The labelled form of a caller context item: ``Context item "NAME":`` then the text.

    The name is JSON-quoted so that a name containing quotes or newlines cannot forge a label.
    """
    return f"Context item {json.dumps(item.name, ensure_ascii=False)}:\n{item.text}"


def _join(*parts: str) -> str:
    return _SEPARATOR.join(part for part in parts if part)


def _probe(text: str, whole: Message, role: str) -> Message | None:
    if not text:
        return None
    return whole if text == whole.content else Message(role=role, content=text)


def _system_message(inputs: AssemblyInputs) -> tuple[Message | None, Message | None]:
    content = _join(inputs.system_prompt, inputs.snippet_block)
    if not content:
        return None, None
    message = Message(role="system", content=content)
    return message, _probe(inputs.system_prompt, message, "system")


def _first_user_message(inputs: AssemblyInputs) -> tuple[Message, Message | None, Message | None]:
    context_texts = [context_item_text(item) for item in inputs.caller_context]
    text = _join(inputs.skill_block, *context_texts, inputs.task_input)
    if not text and not inputs.task_input_parts:
        raise InvalidMessage(
            "task_input: the first user message would be empty (no skill block, context or task input)",
            extra={"field": "task_input"},
        )
    content: str | tuple[ContentPart, ...] = text
    if inputs.task_input_parts:
        content = ((TextPart(text),) if text else ()) + inputs.task_input_parts
    message = Message(role="user", content=content)
    skills_probe = _probe(inputs.skill_block, message, "user")
    context_probe = (
        _probe(_join(inputs.skill_block, *context_texts), message, "user") if context_texts else None
    )
    return message, skills_probe, context_probe


def caller_context_identifier(position: int) -> str:
    """How a caller context item is named in decisions, events and errors: by its position in the
    request (``context[2]``), never by its name, which is caller free text."""
    return f"context[{position}]"


def _added_sources(inputs: AssemblyInputs) -> tuple[Source, ...]:
    added = [
        Source(
            SourceKind.CALLER_CONTEXT,
            item.identifier or caller_context_identifier(position),
            item.data_class,
            None,
            Enforcement.ENFORCE,
        )
        for position, item in enumerate(inputs.caller_context)
    ]
    if inputs.task_input:
        added.append(
            Source(
                SourceKind.TASK_INPUT,
                inputs.task_input_identifier,
                inputs.task_input_data_class,
                None,
                Enforcement.ENFORCE,
            )
        )
    return tuple(added)


def assemble(inputs: AssemblyInputs) -> AssembledContext:
    """The step's messages in wire order (see the module docstring), with their sources.

    ``sources`` is ``inputs.sources`` followed by one enforced source per caller context item
    (kind ``caller_context``, identifier ``context[<position>]``, its declared class) and, when the task
    input is not empty, one for it (kind ``task_input``, identifier ``task_input``, class
    ``inputs.task_input_data_class``). A ``tail_note`` of None or "" adds no message. Raises
    :class:`InvalidMessage` (field ``task_input``) when the first user message would be empty.
    """
    system, system_prompt_probe = _system_message(inputs)
    user, skills_probe, context_probe = _first_user_message(inputs)
    head = (system, user) if system is not None else (user,)
    tail = (Message(role="user", content=inputs.tail_note),) if inputs.tail_note else ()
    segments = Segments(
        head_length=len(head),
        transcript_length=len(inputs.transcript),
        has_system_message=system is not None,
        has_tail_note=bool(tail),
        system_prompt_probe=system_prompt_probe,
        skills_probe=skills_probe,
        context_probe=context_probe,
    )
    return AssembledContext(
        profile=inputs.profile,
        messages=head + inputs.transcript + tail,
        tool_specs=inputs.tool_specs,
        sources=inputs.sources + _added_sources(inputs),
        segments=segments,
    )


def render_tail_note(usage: ContextUsage) -> str:
    """The tail note text for a usage figure: the absolute numbers and their provenance, never a
    fraction (a quotient of an estimate would need a provenance of its own)."""
    window = f"{usage.context_window:,}"
    used = usage.used_tokens
    if used.provenance == Provenance.UNAVAILABLE or used.value is None:
        return f"Context usage: unavailable before the first step; the context window is {window} tokens."
    return (
        f"Context usage: {used.value:,} of {window} tokens used by the last step ({used.provenance.value})."
    )
