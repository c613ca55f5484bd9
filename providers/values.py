"""The values crossing the provider boundary: how to reach a provider, one call, its reply.

An adapter (:mod:`providers.base`) receives a :class:`ProviderConfig` (built by the agents app
from its ``Provider`` row; this package never touches the database) and turns a :class:`ProviderCall`
into a :class:`ProviderReply`, or streams it as the deltas of :mod:`providers.streams`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from context_assembly.assembly import AssembledContext
from context_assembly.errors import InvalidMessage
from context_assembly.messages import FrozenMapping, Message, ThinkingBlock, ToolCall, ToolSpec, freeze_json
from context_assembly.profiles import DEFAULT_CAPABILITIES, ModelCapabilities
from governance.vocabulary import Provenance
from providers.failures import FailureClass, ProviderError

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "other"]
FINISH_REASONS: tuple[str, ...] = ("stop", "tool_calls", "length", "content_filter", "other")
MAX_CONFIGURED_RETRIES = 10


def _configuration_error(identifier: str, problem: str) -> ProviderError:
    return ProviderError(
        f"provider {identifier!r} is misconfigured: {problem}",
        failure_class=FailureClass.CONFIGURATION,
        provider=identifier,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderConfig:
    """How to reach one provider. ``api_key`` is never part of ``repr`` and never logged.

    ``base_url`` is passed to the SDK as configured: OpenAI-compatible servers need the ``/v1`` suffix
    (``https://api.openai.com/v1``, ``http://localhost:11434/v1``), Anthropic does not
    (``https://api.anthropic.com``). ``options`` is frozen on construction (JSON values only); the
    local provider reads its script, context window and latency from it. ``kind`` is not checked here:
    :func:`providers.adapters.adapter_for` refuses an unknown kind as a configuration failure.
    """

    identifier: str
    kind: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout_seconds: float = 30.0
    max_retries: int = 2
    options: Mapping[str, Any] = field(default_factory=lambda: FrozenMapping({}))

    def __post_init__(self) -> None:
        timeout = self.timeout_seconds
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout):
            raise _configuration_error(self.identifier, "timeout_seconds must be a finite number")
        if timeout <= 0:
            raise _configuration_error(self.identifier, "timeout_seconds must be positive")
        retries = self.max_retries
        if isinstance(retries, bool) or not isinstance(retries, int):
            raise _configuration_error(self.identifier, "max_retries must be an integer")
        if not 0 <= retries <= MAX_CONFIGURED_RETRIES:
            raise _configuration_error(self.identifier, f"max_retries must be 0-{MAX_CONFIGURED_RETRIES}")
        try:
            object.__setattr__(self, "options", freeze_json(dict(self.options), "options"))
        except (InvalidMessage, TypeError, ValueError):
            raise _configuration_error(self.identifier, "options must be a JSON object") from None


@dataclass(frozen=True, slots=True)
class PromptLayout:
    """Where the stable parts of a call's messages end, for adapters that mark a cache prefix
    explicitly (Anthropic's ``cache_control``); adapters whose provider caches by prefix on its own
    ignore it. The messages are in the assembly's order: ``head_messages`` (the system message and the
    first user message), the transcript, then ``tail_messages`` volatile messages (the tail note, which
    changes every step).

    * ``skill_block_chars``: how many leading characters of the first user message are the skill
      block (0: none, or nothing follows it), a prefix shared by every run of a configuration.

    The default (nothing known) treats every message as transcript.
    """

    head_messages: int = 0
    skill_block_chars: int = 0
    tail_messages: int = 0

    def __post_init__(self) -> None:
        for name in ("head_messages", "skill_block_chars", "tail_messages"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer")

    @classmethod
    def of(cls, assembled: AssembledContext) -> PromptLayout:
        """The layout of ``assembled`` (also of any fit of it: the fit keeps the head and the tail)."""
        segments = assembled.segments
        skills, first_user = segments.skills_probe, assembled.head[-1]
        chars = 0
        if skills is not None and skills is not first_user and isinstance(skills.content, str):
            chars = len(skills.content)  # the probe *is* the first user message when nothing follows
        return cls(
            head_messages=segments.head_length,
            skill_block_chars=chars,
            tail_messages=1 if segments.has_tail_note else 0,
        )

    def transcript_end(self, message_count: int) -> int | None:
        """The index after the last transcript message of ``message_count`` messages, else None."""
        end = message_count - self.tail_messages
        return end if end > self.head_messages else None


NO_LAYOUT = PromptLayout()

ToolChoice = str | Mapping[str, Any]  # "auto" | "none" | "required" | {"type": "function", "function": {...}}
TOOL_CHOICE_MODES = ("auto", "none", "required")


@dataclass(frozen=True, kw_only=True, slots=True)
class CallOptions:
    """Request parameters a caller may set beyond the messages, passed on where the provider supports
    them (each adapter says which it sends). Every string here was redacted before it got here.

    ``tool_choice`` is OpenAI's: a mode or ``{"type": "function", "function": {"name": ...}}``;
    ``response_format`` is OpenAI's object (``{"type": "json_object"}``, ``{"type": "json_schema", ...}``);
    ``user`` identifies the caller's end user to the provider; ``parallel_tool_calls`` False asks for
    at most one tool call per reply (None: the provider's default).
    """

    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    response_format: Mapping[str, Any] | None = None
    tool_choice: ToolChoice | None = None
    user: str | None = None
    parallel_tool_calls: bool | None = None
    # Extended thinking asked for, with its budget of tokens (part of the reply limit); None: none.
    thinking_budget: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", tuple(self.stop))
        if self.response_format is not None:
            object.__setattr__(self, "response_format", freeze_json(self.response_format, "response_format"))
        choice = self.tool_choice
        if isinstance(choice, Mapping):
            object.__setattr__(self, "tool_choice", freeze_json(choice, "tool_choice"))
        elif choice is not None and choice not in TOOL_CHOICE_MODES:
            raise ValueError(f"tool_choice must be one of {', '.join(TOOL_CHOICE_MODES)} or a function")

    @property
    def forced_function(self) -> str | None:
        """The function name ``tool_choice`` forces, if it names one."""
        choice = self.tool_choice
        if isinstance(choice, Mapping):
            function = choice.get("function")
            return str(function.get("name")) if isinstance(function, Mapping) else None
        return None


NO_OPTIONS = CallOptions()


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderCall:
    """One completion request in wire-neutral form (keyword-only). ``max_tokens`` bounds the reply.

    ``capabilities`` say what the model's API accepts; adapters shape the body from them, never from
    ``model_id`` (the dispatcher sets each target's). ``layout`` says where the stable prefix ends.

    Precondition: built by our own code from validated data, so a wrong shape is a programming error
    and raises ``ValueError``, not :class:`ProviderError`.
    """

    model_id: str
    messages: tuple[Message, ...]
    tool_specs: tuple[ToolSpec, ...] = ()
    max_tokens: int
    stream: bool = False
    temperature: float | None = None
    capabilities: ModelCapabilities = DEFAULT_CAPABILITIES
    layout: PromptLayout = NO_LAYOUT
    options: CallOptions = NO_OPTIONS

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "tool_specs", tuple(self.tool_specs))
        if not isinstance(self.model_id, str) or not self.model_id:
            raise ValueError("model_id must be a non-empty string")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError("max_tokens must be a positive integer")
        if self.layout.head_messages + self.layout.tail_messages > len(self.messages):
            raise ValueError("the layout's head and tail exceed the messages")


@dataclass(frozen=True, slots=True)
class Usage:
    """Normalised usage. ``prompt_tokens`` includes cached tokens (for Anthropic: input + cache read +
    cache creation). ``cached_tokens`` are prompt tokens read from the provider's cache,
    ``cache_write_tokens`` those written to it by this call (Anthropic's cache creation; providers
    that cache on their own do not report it). ``None`` means "not reported", never zero. Provenance
    is ``provider_reported`` when the provider sent usage, else ``unavailable`` with every figure None."""

    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    provenance: Provenance
    cache_write_tokens: int | None = None

    @classmethod
    def unavailable(cls) -> Usage:
        return cls(None, None, None, Provenance.UNAVAILABLE)

    @classmethod
    def reported(
        cls, prompt: int | None, cached: int | None, completion: int | None, cache_write: int | None = None
    ) -> Usage:
        """Figures the provider sent; all None means it sent nothing usable (unavailable)."""
        if prompt is None and cached is None and completion is None and cache_write is None:
            return cls.unavailable()
        return cls(prompt, cached, completion, Provenance.PROVIDER_REPORTED, cache_write)


@dataclass(frozen=True, slots=True)
class ProviderReply:
    """What the model answered. ``model_id`` is the model as served (the provider may resolve an alias);
    ``text`` is ``""`` when the reply only carries tool calls."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: FinishReason
    usage: Usage
    model_id: str
    response_id: str
    thinking: tuple[ThinkingBlock, ...] = ()  # extended thinking, before the text (Anthropic)

    def __post_init__(self) -> None:
        if self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"finish_reason must be one of {', '.join(FINISH_REASONS)}")


EmbeddingInput = str | tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class EmbeddingCall:
    """One embeddings request in wire-neutral form: ``inputs`` in order (texts or token arrays), and
    the vector length asked for (None: the model's own)."""

    model_id: str
    inputs: tuple[EmbeddingInput, ...]
    dimensions: int | None = None

    def __post_init__(self) -> None:
        if not self.model_id:
            raise ValueError("model_id must be a non-empty string")
        if not self.inputs:
            raise ValueError("an embedding call needs at least one input")

    def body(self) -> dict[str, Any]:
        """OpenAI's ``POST /embeddings`` body: floats asked for, so every server answers alike."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "input": [item if isinstance(item, str) else list(item) for item in self.inputs],
            "encoding_format": "float",
        }
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        return body


@dataclass(frozen=True)
class EmbeddingReply:
    """One vector per input, in the inputs' order; the usage counts prompt tokens only."""

    vectors: tuple[tuple[float, ...], ...]
    usage: Usage
    model_id: str
