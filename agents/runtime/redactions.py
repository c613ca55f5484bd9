"""Redaction of everything a send puts on the wire, and the memo that spares re-redacting what a run
sends again every step (its transcript). Only counts by kind are kept and reported, never the values.
"""

from __future__ import annotations

import json
from collections.abc import Container, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from config.caches import cache_register
from config.lru import LruCache
from context_assembly.messages import Message, ThinkingBlock, ToolCall, ToolSpec
from context_assembly.parts import ContentPart, FilePart, TextPart
from governance.guardrails.redaction import Redaction, redact
from governance.services import EventContext, enforced_event_record
from governance.telemetry import redactions_counted
from governance.vocabulary import Decision, TrustZone
from providers.values import NO_OPTIONS, CallOptions

CLEAN_TEXT_MAX_CHARS = 4096


class RedactionMemo:
    """Redaction results of recently seen texts (a transcript is re-sent every step), keyed by the
    text itself, and the redacted forms of recently sent transcript messages, keyed by identity.

    A worker holds a run's transcript as the same Message objects from step to step, so the message
    lookup replaces re-redacting every message of a long transcript at every step; an entry keeps
    its message alive (so the identity stays valid) and stores the counts by kind, so a send still
    reports every secret it redacted. Both only save work: a miss redacts anew.

    Short texts found clean are also kept in ``clean_texts``, read without a lock by :meth:`clean`:
    the guard pass asks it for every string of a provider body, thousands per step.
    """

    def __init__(
        self,
        max_texts: int = 8192,
        max_messages: int = 16_384,
        max_text_chars: int = 262_144,
        max_clean_texts: int = 32_768,
    ) -> None:
        self.texts: LruCache[str, Redaction] = LruCache(max_texts)
        self.messages: LruCache[int, tuple[Message, Message, dict[str, int]]] = LruCache(max_messages)
        self._max_text_chars = max_text_chars
        self.clean_texts: LruCache[str, bool] = LruCache(max_clean_texts)

    def redact(self, value: str) -> Redaction:
        if len(value) > self._max_text_chars:
            return redact(value)
        return self.texts.get_or_build(value, lambda: redact(value))

    @property
    def seen_clean(self) -> Container[str]:
        """The short texts already found clean (a live view: a membership test, no call of ours)."""
        return self.clean_texts.keys()

    def clean(self, value: str) -> bool:
        """Whether ``value`` holds no secret; for a short text already found clean, one dict read."""
        if self.clean_texts.peek(value):
            return True
        if self.redact(value).findings:
            return False
        if len(value) <= CLEAN_TEXT_MAX_CHARS:
            self.clean_texts.put(value, True)
        return True

    def message_put(self, message: Message, redacted: Message, counts: dict[str, int]) -> None:
        self.messages.put(id(message), (message, redacted, counts))


REDACTION_MEMO = RedactionMemo()
cache_register(
    REDACTION_MEMO.texts,
    name="redacted_texts",
    key="the text itself (texts up to 262,144 characters; longer ones are redacted anew)",
    invalidation="none needed: a redaction is a pure function of the text (and of the detectors' code)",
)
cache_register(
    REDACTION_MEMO.clean_texts,
    name="clean_texts",
    key="a text up to 4,096 characters that redaction left unchanged (read without recency by the guard)",
    invalidation="none needed: whether a text holds a secret is a pure function of the text",
)
cache_register(
    REDACTION_MEMO.messages,
    name="redacted_messages",
    key="id() of a transcript Message, held by its entry, so the id cannot be reused while it is stored",
    invalidation="none needed: Messages are immutable; a lookup checks the entry holds the very object",
)


@dataclass
class Redactions:
    """Counts of redacted secrets by kind, across every part of one send. Never the values."""

    counts: dict[str, int] = field(default_factory=dict)

    def text(self, value: str) -> str:
        if not value:
            return value
        result = REDACTION_MEMO.redact(value)
        if not result.findings:
            return value  # the same object: an unchanged message is reused with its cached digest
        self._add(result.counts_by_kind())
        return result.text

    def message(self, message: Message, *, remember: bool = True) -> Message:
        """``message`` redacted; ``remember``: it outlives this send, so its redaction is remembered
        by identity (``TranscriptEntry.held``)."""
        if not remember:
            return self._message(message)
        known = REDACTION_MEMO.messages.get(id(message))  # (message, redacted, counts); an id reused
        if known is not None and known[0] is message:  # by another object is no hit
            if known[2]:
                self._add(known[2])
            return known[1]
        own = Redactions()
        redacted = own._message(message)
        REDACTION_MEMO.message_put(message, redacted, own.counts)
        self._add(own.counts)
        return redacted

    def part(self, part: ContentPart) -> ContentPart:
        """A content part redacted (the same object when clean). A PDF's extracted text passes the
        same redaction as any text; one that held a secret cannot be sent as its bytes (the secret
        is in them), so it is sent as its redacted text instead, labelled with its file name."""
        if isinstance(part, TextPart):
            text = self.text(part.text)
            return part if text is part.text else TextPart(text)
        if isinstance(part, FilePart):
            text = self.text(part.text)
            name = self.text(part.filename)
            if text is part.text and name is part.filename:
                return part
            return TextPart(f"Document {json.dumps(name, ensure_ascii=False)} (its text; redacted):\n{text}")
        return part

    def _add(self, counts: dict[str, int]) -> None:
        for kind, count in counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + count

    def _message(self, message: Message) -> Message:
        """Every text of ``message``: its content, name, tool call ids, names and arguments, and the id
        of the call it answers. The same object when nothing changed."""
        content = message.content
        redacted_content = (
            self.text(content) if isinstance(content, str) else tuple(self.part(part) for part in content)
        )
        name = self.text(message.name) if message.name else message.name
        calls = self.tool_calls(message.tool_calls)
        call_id = self.text(message.tool_call_id) if message.tool_call_id else message.tool_call_id
        thinking = self.thinking(message.thinking)
        before = (content, message.name, message.tool_calls, message.tool_call_id, message.thinking)
        if (redacted_content, name, calls, call_id, thinking) == before:
            return message
        return Message(
            role=message.role,
            content=redacted_content,
            name=name,
            tool_calls=calls,
            tool_call_id=call_id,
            thinking=thinking,
        )

    def thinking(self, blocks: tuple[ThinkingBlock, ...]) -> tuple[ThinkingBlock, ...]:
        """Thinking blocks redacted: a block whose text held a secret loses its signature (its text is
        no longer what was signed, so it cannot be sent back; ``providers/anthropic_messages.py``)."""
        redacted = []
        for block in blocks:
            text = self.text(block.thinking)
            redacted.append(block if text is block.thinking else ThinkingBlock(thinking=text))
        return tuple(redacted)

    def json_value(self, value: Any) -> Any:
        """A JSON value (frozen or plain) with every string in it redacted, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(key): self.json_value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.json_value(item) for item in value]
        return value

    def tool_spec(self, spec: ToolSpec) -> ToolSpec:
        """A caller's tool spec with its name, description and schema redacted (the same object when
        clean). A name a redaction changed is no longer a valid function name: the spec is refused."""
        redacted = ToolSpec(
            name=self.text(spec.name),
            description=self.text(spec.description),
            parameters=self.json_value(spec.parameters),
            strict=spec.strict,
        )
        return spec if redacted == spec else redacted

    def options(self, options: CallOptions) -> CallOptions:
        """``options`` with every string redacted (stop sequences, user, the response format's schema,
        the forced function's name)."""
        if options == NO_OPTIONS:
            return options
        return replace(
            options,
            stop=tuple(self.text(stop) for stop in options.stop),
            user=self.text(options.user) if options.user is not None else None,
            response_format=self.json_value(options.response_format),
            tool_choice=self.json_value(options.tool_choice),
        )

    def arguments(self, value: str) -> str:
        """A tool call's arguments redacted. JSON text stays valid JSON: each string in it is redacted
        (keys included), since a placeholder replacing a secret that ends in an escaped quote would
        otherwise take the escape with it. Text that is not JSON, or JSON that still holds a secret
        across its strings, is redacted as text."""
        if not value or not REDACTION_MEMO.redact(value).findings:
            return value
        try:
            parsed = json.loads(value)
        except ValueError:
            return self.text(value)
        own = Redactions()
        redacted = json.dumps(own.json_value(parsed), ensure_ascii=False, separators=(",", ":"))
        if REDACTION_MEMO.redact(redacted).findings:
            return self.text(value)
        self._add(own.counts)
        return redacted

    def tool_calls(self, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        """``calls`` with every id, name and arguments text redacted (the same tuple when clean)."""
        redacted = tuple(
            ToolCall(id=self.text(c.id), name=self.text(c.name), arguments=self.arguments(c.arguments))
            for c in calls
        )
        return calls if redacted == calls else redacted


def redaction_events_record(*, counts: dict[str, int], context: EventContext, zone: TrustZone | None) -> None:
    """One ``secret_redacted`` event per kind redacted: how many, never what. ``zone`` is None for
    what was redacted before any send (a run's stored request)."""
    redactions_counted(counts)
    for kind, count in sorted(counts.items()):
        reason = f"{count} x {kind}"
        enforced_event_record(context=context, decision=Decision.SECRET_REDACTED, zone=zone, reason=reason)
