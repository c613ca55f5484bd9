"""The guard pass: the last look at every provider request body before it is sent.

Secrets are redacted part by part before assembly (``agents.runtime.plan``), which keeps the fit exact:
what is counted is what is sent. That pass sees the parts; it cannot see what an adapter derives from
them (the Anthropic adapter decodes tool-call arguments from their JSON text and joins system messages)
nor a text that reached the call some other way (a tool spec's description, a label). This pass reads
the body each adapter is about to send, every string of it, object keys included, and:

* on a clean body (the usual case) changes nothing: the call and its body go out as built. The words
  adapters write themselves (``role``, ``assistant``, ``tool_calls``, ...) are skipped, and every other
  string costs a set look-up in the redaction memo once it has been seen clean (the per-part pass saw
  most of them), so the pass is a walk over the body;
* when it finds a secret, redacts every string of the call (messages, names, ids, tool calls, tool
  specs), rebuilds the body from the redacted call and redacts whatever the adapter derived anew,
  re-counts the prompt with the send's estimator, and reports a :class:`LateRedaction` (kinds and
  counts, never values) before anything is sent. Over the send's budget after that, it raises
  :class:`LateRedactionOverflow` and nothing is sent.

A late redaction means the per-part pass missed something: the caller records a ``late_redaction``
governance event, and the test suite fails on one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Container
from dataclasses import dataclass, replace
from typing import Any, Protocol

from context_assembly.estimator import Estimator
from context_assembly.messages import (
    ContentPart,
    FilePart,
    Message,
    TextPart,
    ToolCall,
    ToolSpec,
    thaw_json,
)
from governance.guardrails.redaction import Redaction
from providers.base import ProviderAdapter
from providers.values import ProviderCall

_NOT_A_FUNCTION_NAME = re.compile(r"[^A-Za-z0-9_-]")
# Words the adapters themselves write as keys and values of a body: none can be a secret.
# fmt: off
_STRUCTURE = frozenset((
    "model", "messages", "max_tokens", "max_completion_tokens", "developer", "tools", "temperature", "stream", "stream_options", "include_usage",
    "extra_body", "role", "content", "name", "tool_calls", "tool_call_id", "id", "type", "function",
    "arguments", "description", "parameters", "strict", "text", "image_url", "url", "detail", "system",
    "file", "file_data", "filename", "document",
    "user", "assistant", "tool", "tool_use", "tool_use_id", "tool_result", "input", "input_schema", "source",
    "media_type", "data", "base64", "image", "object", "properties", "required", "string", "integer",
    "number", "boolean", "array", "items", "enum",
))
# fmt: on


class Scanner(Protocol):
    """The redaction the guard uses: ``clean`` answers fast for strings already seen clean, and
    ``seen_clean`` holds such strings, for a membership test that costs no call."""

    @property
    def seen_clean(self) -> Container[str]: ...

    def clean(self, text: str) -> bool: ...

    def redact(self, text: str) -> Redaction: ...


@dataclass(frozen=True)
class LateRedaction:
    """What the guard redacted in the body for one target. Never the values."""

    target_index: int
    provider: str
    counts: dict[str, int]  # kind -> occurrences
    estimated: int  # prompt tokens after the redaction, by the send's estimator
    budget: int


class LateRedactionOverflow(Exception):
    """The redacted request no longer fits the send's budget: it is not sent."""

    def __init__(self, late: LateRedaction) -> None:
        super().__init__(f"a late redaction took the request to {late.estimated} tokens, over {late.budget}")
        self.late = late


@dataclass(frozen=True)
class WireGuard:
    """The guard of one send: the memoised redaction, the estimator and budget of its fit, and where
    a late redaction is reported (the reporter may raise: then nothing is sent)."""

    scanner: Scanner
    estimator: Estimator
    budget: int
    on_late_redaction: Callable[[LateRedaction], None]

    def prepare(
        self, adapter: ProviderAdapter, call: ProviderCall, *, target_index: int = 0
    ) -> tuple[ProviderCall, dict[str, Any]]:
        """The call and the body ``adapter`` will send: both unchanged when the body is clean.

        Raises :class:`LateRedactionOverflow` (reported first) when the redacted request exceeds the
        budget, and ``ProviderError`` when the adapter cannot build a body."""
        body = adapter.request_body(call)
        if _is_clean(body, self.scanner.clean, self.scanner.seen_clean):
            return call, body
        counts: Counter[str] = Counter()
        redacted = _redacted_call(call, _Redactor(self.scanner, counts))
        body = adapter.request_body(redacted)
        derived = _Redactor(self.scanner, counts, self.estimator)
        body = derived.tree(body)
        estimated = self.estimator.count_request(redacted.messages, redacted.tool_specs) + derived.delta
        late = LateRedaction(
            target_index=target_index,
            provider=adapter.config.identifier,
            counts=dict(sorted(counts.items())),
            estimated=estimated,
            budget=self.budget,
        )
        self.on_late_redaction(late)
        if estimated > self.budget:
            raise LateRedactionOverflow(late)
        return redacted, body


def _is_clean(body: Any, clean: Callable[[str], bool], seen_clean: Container[str]) -> bool:
    """True when no string of ``body`` (object keys included) holds a secret. Iterative, with exact
    type checks first (a body is built of plain dicts, lists and strings), and a string already seen
    clean costs one membership test: it runs over thousands of strings per step."""
    stack = [body]
    pop, extend = stack.pop, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is str or (kind is not dict and kind is not list and isinstance(value, str)):
            if value not in seen_clean and value not in _STRUCTURE and not clean(value):
                return False
        elif kind is dict or isinstance(value, dict):
            if not value.keys() <= _STRUCTURE:  # the usual body has only the adapters' own keys
                for key in value:
                    if key in seen_clean or key in _STRUCTURE or not isinstance(key, str):
                        continue
                    if not clean(key):
                        return False
            extend(value.values())
        elif kind is list or isinstance(value, list | tuple):
            extend(value)
    return True


class _Redactor:
    """Redacts strings through ``scanner``, adding the kinds to ``counts``; with an ``estimator``, also
    sums the token change of every string it changed (``delta``), for strings no message holds."""

    def __init__(self, scanner: Scanner, counts: Counter[str], estimator: Estimator | None = None) -> None:
        self.scanner, self.counts, self.estimator, self.delta = scanner, counts, estimator, 0

    def text(self, value: str) -> str:
        result = self.scanner.redact(value)
        if not result.findings:
            return value
        self.counts.update(result.counts_by_kind())
        if self.estimator is not None:
            self.delta += self.estimator.count_text(result.text) - self.estimator.count_text(value)
        return result.text

    def optional(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def tree(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                (self.text(key) if isinstance(key, str) else key): self.tree(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return type(value)(self.tree(item) for item in value)
        return value


def _redacted_call(call: ProviderCall, redactor: _Redactor) -> ProviderCall:
    return replace(
        call,
        model_id=redactor.text(call.model_id),
        messages=tuple(_redacted_message(message, redactor) for message in call.messages),
        tool_specs=tuple(_redacted_spec(spec, redactor) for spec in call.tool_specs),
    )


def _redacted_message(message: Message, redactor: _Redactor) -> Message:
    content: str | tuple[ContentPart, ...]
    if isinstance(message.content, str):
        content = redactor.text(message.content)
    else:
        content = tuple(_redacted_part(part, redactor) for part in message.content)
    return Message(
        role=message.role,
        content=content,
        name=redactor.optional(message.name),
        tool_calls=tuple(
            ToolCall(id=redactor.text(c.id), name=redactor.text(c.name), arguments=redactor.text(c.arguments))
            for c in message.tool_calls
        ),
        tool_call_id=redactor.optional(message.tool_call_id),
    )


def _redacted_part(part: ContentPart, redactor: _Redactor) -> ContentPart:
    if isinstance(part, TextPart):
        return TextPart(redactor.text(part.text))
    if isinstance(part, FilePart):
        # The extracted text was redacted when the send was planned (agents/runtime/redactions.py); the
        # bytes are a document's, which no detector reads as a secret.
        return replace(part, filename=redactor.text(part.filename))
    return replace(part, url=redactor.text(part.url))


def _redacted_spec(spec: ToolSpec, redactor: _Redactor) -> ToolSpec:
    # A function name allows letters, digits, "_" and "-" only: a redacted one keeps that shape.
    name = _NOT_A_FUNCTION_NAME.sub("_", redactor.text(spec.name))[:64]
    return ToolSpec(
        name=name,
        description=redactor.text(spec.description),
        parameters=redactor.tree(thaw_json(spec.parameters)),
        strict=spec.strict,
    )
