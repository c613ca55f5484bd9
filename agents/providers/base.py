"""The provider boundary: what goes in, what comes out, and the adapter base class.

An adapter receives a :class:`ProviderConfig` (built by the agents app from its ``Provider`` row; this
package never touches the database) and turns a :class:`ProviderCall` into a :class:`ProviderReply`.
:meth:`ProviderAdapter.complete` raises :class:`ProviderError` and nothing else: SDK exceptions,
transport errors, undecodable JSON and replies of an unexpected shape are all classified into a
:class:`FailureClass` (see :mod:`agents.providers.failures`), which decides whether the dispatcher may
retry or walk fallbacks.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.providers.failures import (
    FailureClass,
    ProviderError,
    SdkErrors,
    provider_error_from,
)
from context_assembly.errors import InvalidMessage
from context_assembly.messages import FrozenMapping, Message, ToolCall, ToolSpec, freeze_json
from context_assembly.profiles import DEFAULT_CAPABILITIES, ModelCapabilities
from governance.vocabulary import Provenance

__all__ = [
    "FailureClass",
    "FinishReason",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderConfig",
    "ProviderError",
    "ProviderReply",
    "SdkErrors",
    "Usage",
]

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


@dataclass(frozen=True, kw_only=True)
class ProviderCall:
    """One completion request in wire-neutral form (keyword-only). ``max_tokens`` bounds the reply.

    ``capabilities`` say what the model's API accepts; adapters shape the body from them, never from
    ``model_id`` (the dispatcher sets each target's).

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

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "tool_specs", tuple(self.tool_specs))
        if not isinstance(self.model_id, str) or not self.model_id:
            raise ValueError("model_id must be a non-empty string")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError("max_tokens must be a positive integer")


@dataclass(frozen=True)
class Usage:
    """Normalised usage. ``prompt_tokens`` includes cached tokens (for Anthropic: input + cache read +
    cache creation). ``None`` means "not reported", never zero. Provenance is ``provider_reported``
    when the provider sent usage, else ``unavailable`` with every figure None."""

    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    provenance: Provenance

    @classmethod
    def unavailable(cls) -> Usage:
        return cls(None, None, None, Provenance.UNAVAILABLE)

    @classmethod
    def reported(cls, prompt: int | None, cached: int | None, completion: int | None) -> Usage:
        """Figures the provider sent; all three None means it sent nothing usable (unavailable)."""
        if prompt is None and cached is None and completion is None:
            return cls.unavailable()
        return cls(prompt, cached, completion, Provenance.PROVIDER_REPORTED)


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


# --- the adapter base -------------------------------------------------------------------------------------


class ProviderAdapter(ABC):
    """One provider kind. Subclasses implement :meth:`_complete`; :meth:`complete` guarantees that only
    :class:`ProviderError` escapes. ``sdk_errors`` names the SDK's exception classes (None: no SDK)."""

    sdk_errors: SdkErrors | None = None

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    def complete(self, call: ProviderCall) -> ProviderReply:
        """Send ``call`` once (no retries here: the dispatcher retries). Raises :class:`ProviderError`."""
        try:
            return self._complete(call)
        except ProviderError:
            raise
        except Exception as exc:
            raise provider_error_from(exc, provider=self.config.identifier, sdk=self.sdk_errors) from None

    @abstractmethod
    def _complete(self, call: ProviderCall) -> ProviderReply: ...

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
