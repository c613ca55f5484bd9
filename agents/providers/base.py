"""The provider boundary: what goes in, what comes out, and the adapter base class.

An adapter receives a :class:`ProviderConfig` (built by the agents app from its ``Provider`` row; this
package never touches the database) and turns a :class:`ProviderCall` into a :class:`ProviderReply`.
:meth:`ProviderAdapter.complete` raises :class:`ProviderError` and nothing else: SDK exceptions,
transport errors, undecodable JSON and replies of an unexpected shape are all classified into a
:class:`FailureClass` (see :mod:`agents.providers.failures`), which decides whether the dispatcher may
retry or walk fallbacks.
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from agents.providers.failures import (
    FailureClass,
    ProviderError,
    SdkErrors,
    provider_error_from,
)
from context_assembly.assembly import AssembledContext
from context_assembly.errors import InvalidMessage
from context_assembly.messages import FrozenMapping, Message, ToolCall, ToolSpec, freeze_json, thaw_json
from context_assembly.profiles import DEFAULT_CAPABILITIES, ModelCapabilities
from governance.vocabulary import Provenance

__all__ = [
    "CallOptions",
    "FailureClass",
    "FinishReason",
    "PromptLayout",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderConfig",
    "ProviderError",
    "ProviderReply",
    "ProviderStream",
    "SdkErrors",
    "StreamDelta",
    "StreamFinish",
    "TextDelta",
    "ToolCallDelta",
    "Usage",
    "UsageDelta",
    "chat_completions_body",
]

logger = logging.getLogger("agents.providers")

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "other"]
FINISH_REASONS: tuple[str, ...] = ("stop", "tool_calls", "length", "content_filter", "other")
MAX_CONFIGURED_RETRIES = 10


# --- values crossing the boundary ----------------------------------------------------------------------


def _configuration_error(identifier: str, problem: str) -> ProviderError:
    return ProviderError(
        f"provider {identifier!r} is misconfigured: {problem}",
        failure_class=FailureClass.CONFIGURATION,
        provider=identifier,
    )


@dataclass(frozen=True, kw_only=True)
class ProviderConfig:
    """How to reach one provider. ``api_key`` is never part of ``repr`` and never logged.

    ``base_url`` is passed to the SDK as configured: OpenAI-compatible servers need the ``/v1`` suffix
    (``https://api.openai.com/v1``, ``http://localhost:11434/v1``), Anthropic does not
    (``https://api.anthropic.com``). ``options`` is frozen on construction (JSON values only); the
    local provider reads its script, context window and latency from it. ``kind`` is not checked here:
    :func:`agents.providers.dispatch.adapter_for` refuses an unknown kind as a configuration failure.
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


@dataclass(frozen=True)
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


@dataclass(frozen=True, kw_only=True)
class CallOptions:
    """Request parameters a caller may set beyond the messages, passed on where the provider supports
    them (each adapter says which it sends). Every string here was redacted before it got here.

    ``tool_choice`` is OpenAI's: a mode or ``{"type": "function", "function": {"name": ...}}``;
    ``response_format`` is OpenAI's object (``{"type": "json_object"}``, ``{"type": "json_schema", ...}``);
    ``user`` identifies the caller's end user to the provider.
    """

    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    response_format: Mapping[str, Any] | None = None
    tool_choice: ToolChoice | None = None
    user: str | None = None

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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class ProviderReply:
    """What the model answered. ``model_id`` is the model as served (the provider may resolve an alias);
    ``text`` is ``""`` when the reply only carries tool calls."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: FinishReason
    usage: Usage
    model_id: str
    response_id: str

    def __post_init__(self) -> None:
        if self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"finish_reason must be one of {', '.join(FINISH_REASONS)}")


# --- streams ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, as the provider sent it (never empty)."""

    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of tool call number ``index`` (0-based, in the order the calls open). ``id`` and ``name``
    come with the call's first piece only (None afterwards); ``arguments`` is the next fragment of its
    JSON text, to be concatenated by ``index``."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class UsageDelta:
    """The call's usage, once the provider reported it (before :class:`StreamFinish`)."""

    usage: Usage


@dataclass(frozen=True)
class StreamFinish:
    """The last delta of a stream that ended as it should: the whole reply, exactly what
    :meth:`ProviderAdapter.complete` returns for the same call (tool-call arguments normalised as
    there)."""

    reply: ProviderReply


StreamDelta = TextDelta | ToolCallDelta | UsageDelta | StreamFinish


class ProviderStream(Iterator[StreamDelta]):
    """An open stream: the request was sent and the provider answered with a success status, the body
    is still arriving. Iterating yields :class:`StreamDelta` values and ends right after one
    :class:`StreamFinish`; a stream cut short (no finish from the provider) raises
    :class:`ProviderError` (``connection``), never ends quietly. Only :class:`ProviderError` escapes.
    Closing (also on leaving a ``with`` block, or after an error) releases the connection; idempotent.
    """

    def __init__(
        self,
        deltas: Iterator[StreamDelta],
        *,
        close: Callable[[], None],
        classify: Callable[[Exception], ProviderError],
    ) -> None:
        self._deltas = deltas
        self._close = close
        self._classify = classify
        self.closed = False

    def __next__(self) -> StreamDelta:
        if self.closed:
            raise StopIteration
        try:
            return next(self._deltas)
        except StopIteration:
            self.close()
            raise
        except ProviderError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise self._classify(exc) from None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self._close()
            except Exception as exc:  # releasing a socket must not mask the stream's own outcome
                logger.warning("closing a provider stream failed: %s", type(exc).__name__)

    def __enter__(self) -> ProviderStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def reply_of(stream: Iterator[StreamDelta]) -> ProviderReply:
    """The whole reply of ``stream`` (read to its end). Raises :class:`ProviderError`."""
    for delta in stream:
        if isinstance(delta, StreamFinish):
            return delta.reply
    raise TypeError("a provider stream ended without its finish")  # ProviderStream never does


def deltas_of(reply: ProviderReply) -> Iterator[StreamDelta]:
    """A whole reply as the deltas a stream of it would carry: the text, each tool call, usage, finish."""
    if reply.text:
        yield TextDelta(reply.text)
    for index, tool_call in enumerate(reply.tool_calls):
        yield ToolCallDelta(index, tool_call.id, tool_call.name, tool_call.arguments)
    yield UsageDelta(reply.usage)
    yield StreamFinish(reply)


def chat_completions_body(call: ProviderCall) -> dict[str, Any]:
    """The OpenAI Chat Completions body of ``call`` (model, messages, reply limit, tools, temperature);
    the wire-neutral shape, also what the offline ``local`` provider receives."""
    body: dict[str, Any] = {
        "model": call.model_id,
        "messages": [message.to_openai() for message in call.messages],
        "max_tokens": call.max_tokens,
    }
    if call.tool_specs:
        body["tools"] = [spec.to_openai() for spec in call.tool_specs]
    if call.temperature is not None:
        body["temperature"] = call.temperature
    body.update(openai_options(call.options, sampling=True))
    return body


def openai_options(options: CallOptions, *, sampling: bool) -> dict[str, Any]:
    """The Chat Completions fields of ``options`` that are set (``top_p`` only when the model takes
    sampling parameters)."""
    fields: dict[str, Any] = {}
    if options.top_p is not None and sampling:
        fields["top_p"] = options.top_p
    if options.stop:
        fields["stop"] = list(options.stop)
    if options.seed is not None:
        fields["seed"] = options.seed
    if options.response_format is not None:
        fields["response_format"] = thaw_json(options.response_format)
    if options.tool_choice is not None:
        fields["tool_choice"] = thaw_json(options.tool_choice)
    if options.user is not None:
        fields["user"] = options.user
    return fields


# --- the adapter base -------------------------------------------------------------------------------------


KEYLESS_PLACEHOLDER = "no-key-configured"


def sdk_client_options(config: ProviderConfig) -> dict[str, Any]:
    """The client arguments both SDKs take alike. An explicit key (a placeholder for a keyless server) also
    stops the SDK from reading its environment and profile credentials; the dispatcher does the retries."""
    return {
        "base_url": config.base_url,
        "api_key": config.api_key or KEYLESS_PLACEHOLDER,
        "timeout": config.timeout_seconds,
        "max_retries": 0,
    }


class ProviderAdapter(ABC):
    """One provider kind. Subclasses implement :meth:`_request_body` (the wire body of a call) and
    :meth:`_send` (send that body once); the public methods guarantee that only :class:`ProviderError`
    escapes. ``sdk_errors`` names the SDK's exception classes (None: no SDK).

    The body is built apart from the sending so that the dispatcher's guard pass
    (:mod:`agents.providers.guard`) reads exactly what will be sent, and so that the retries of one
    target send the same body without rebuilding it.
    """

    sdk_errors: SdkErrors | None = None

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    def request_body(self, call: ProviderCall) -> dict[str, Any]:
        """The body this adapter sends for ``call``: JSON values only, every string as it goes on the
        wire. Raises :class:`ProviderError` (e.g. ``client_error`` for a call the API cannot express)."""
        try:
            return self._request_body(call)
        except ProviderError:
            raise
        except Exception as exc:
            raise provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors) from None

    def send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        """Send ``body`` once (no retries here: the dispatcher retries). ``body`` is
        :meth:`request_body` of ``call``; both describe the same request (a guard that redacts hands
        over both redacted). Raises :class:`ProviderError`."""
        try:
            return self._send(call, body)
        except ProviderError:
            raise
        except Exception as exc:
            raise provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors) from None

    def complete(self, call: ProviderCall) -> ProviderReply:
        """Build the body of ``call`` and send it once, without a guard pass. Raises :class:`ProviderError`."""
        return self.send(call, self.request_body(call))

    def stream(self, call: ProviderCall, body: dict[str, Any]) -> ProviderStream:
        """Send ``body`` once and return the open stream of its reply (no retries here). ``call`` must
        ask for a stream (``call.stream``) and ``body`` be :meth:`request_body` of it. Opening raises
        :class:`ProviderError` for anything the provider answers before its first byte of content (a
        refused key, a rate limit, a server error); the stream raises it for what breaks later."""
        if not call.stream:
            raise ValueError("stream() needs a call with stream=True")
        try:
            deltas, close = self._open_stream(call, body)
        except ProviderError:
            raise
        except Exception as exc:
            raise self.classify(exc) from None
        return ProviderStream(deltas, close=close, classify=self.classify)

    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]:
        """The deltas of the reply and how to release its connection. By default the whole reply is
        awaited and then handed over as deltas (an adapter that cannot stream still can be streamed)."""
        return deltas_of(self._send(call, body)), _nothing

    def require_event_stream(self, content_type: str, close: Callable[[], None]) -> None:
        """Refuse a success answer to a stream request that is not an event stream (a server that
        ignored ``stream``, or a proxy's page) as ``malformed``, closing it: read as events it would
        end without a finish and pass for a dropped connection, which is retried."""
        if not content_type.lower().startswith("text/event-stream"):
            close()
            raise self.error(
                FailureClass.MALFORMED, "the stream request was not answered with an event stream"
            )

    def classify(self, exc: Exception) -> ProviderError:
        """``exc`` (raised by the SDK or the transport) as the :class:`ProviderError` it stands for."""
        return provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors)

    @abstractmethod
    def _request_body(self, call: ProviderCall) -> dict[str, Any]: ...

    @abstractmethod
    def _send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply: ...

    def close(self) -> None:  # noqa: B027 - optional hook; adapters without resources keep the default
        """Release network resources (connection pools). Idempotent."""

    def error(self, failure_class: FailureClass, problem: str) -> ProviderError:
        """A :class:`ProviderError` raised by the adapter itself (``problem`` must carry no content)."""
        return ProviderError(
            f"provider {self.config.identifier!r}: {problem}",
            failure_class=failure_class,
            provider=self.config.identifier,
        )

    def tool_call(self, call_id: str | None, name: str | None, arguments: str, index: int) -> ToolCall:
        """A validated :class:`ToolCall`; a missing id (some local servers omit it) becomes
        ``call_<index>``, a missing name is a malformed reply."""
        if not name:
            raise self.error(FailureClass.MALFORMED, f"tool call {index} has no function name")
        return ToolCall(id=call_id or f"call_{index}", name=name, arguments=arguments)


def _nothing() -> None:
    return None


class _Closable(Protocol):
    def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)


class SdkAdapter(ProviderAdapter, Generic[ClientT]):
    """An adapter over a vendor SDK: it opens one client from the configuration (which opens no
    connection), closes it, and sends a call either for one whole reply or as a stream."""

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self._client = self._open(sdk_client_options(config))

    @abstractmethod
    def _open(self, options: dict[str, Any]) -> ClientT: ...

    def close(self) -> None:
        self._client.close()

    def _send(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply:
        if not call.stream:
            return self._send_whole(call, body)
        with self.stream(call, body) as stream:
            return reply_of(stream)

    @abstractmethod
    def _send_whole(self, call: ProviderCall, body: dict[str, Any]) -> ProviderReply: ...

    @abstractmethod
    def _open_stream(
        self, call: ProviderCall, body: dict[str, Any]
    ) -> tuple[Iterator[StreamDelta], Callable[[], None]]: ...
