"""Each attempt of a provider call observed alike, whichever client made it: a ``chat {model}`` span with
the GenAI semantic conventions' attributes, counted and timed in ``providers/metrics.py``. Whole calls
go through :func:`provider_call_observed`, streams and calls made on an event loop through
:class:`StreamObserved`."""

from __future__ import annotations

import time
from collections.abc import Callable

from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from config.tracing import TRACER, span_annotate, traced_span
from providers.metrics import failure_class, provider_call_timed, provider_stream_ended
from providers.values import ProviderReply

# The GenAI conventions' provider names for our provider kinds (a local provider has none of theirs).
GEN_AI_PROVIDERS = {"openai_compatible": "openai", "anthropic": "anthropic", "local": "local"}


class StreamObserved:
    """One attempt of a streamed provider call, observed as :func:`provider_call_observed` observes a
    whole one: its ``chat {model}`` span starts at the request and ends with the stream (the span is
    not made current, so what the caller does between deltas is not its child), and the call is
    counted and timed to its end (``providers/metrics.py``). Call :meth:`finished` or :meth:`failed` once.
    A whole call made on an event loop is observed alike (its end is its reply)."""

    def __init__(self, *, provider: str, kind: str, model: str) -> None:
        self.provider, self.model = provider, model
        self.started = time.perf_counter()
        self.span = TRACER.start_span(
            f"chat {model}", kind=SpanKind.CLIENT, attributes=_chat_attributes(provider, kind, model)
        )

    def finished(self, reply: ProviderReply) -> None:
        usage = reply.usage
        attributes = {
            "gen_ai.usage.input_tokens": usage.prompt_tokens,
            "gen_ai.usage.output_tokens": usage.completion_tokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
            "gen_ai.response.finish_reasons": [reply.finish_reason],
        }
        self.span.set_attributes({key: value for key, value in attributes.items() if value is not None})
        self.span.end()
        provider_stream_ended(provider=self.provider, model=self.model, started=self.started, usage=usage)

    def closed(self) -> None:
        """The stream was closed before its end (its reader went away): counted as ``closed``."""
        self.span.set_attribute("error.type", "closed")
        self.span.end()
        provider_stream_ended(
            provider=self.provider, model=self.model, started=self.started, outcome="closed"
        )

    def failed(self, error: BaseException) -> None:
        self.span.set_status(Status(StatusCode.ERROR))
        self.span.set_attribute("error.type", failure_class(error))
        self.span.end()
        provider_stream_ended(provider=self.provider, model=self.model, started=self.started, error=error)


def _chat_attributes(provider: str, kind: str, model: str) -> dict[str, AttributeValue]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": GEN_AI_PROVIDERS.get(kind, kind),
        "gen_ai.request.model": model,
        "govctx.provider": provider,
    }


def provider_call_observed(
    complete: Callable[[], ProviderReply], *, provider: str, kind: str, model: str
) -> ProviderReply:
    """``complete()`` (one attempt of a provider call) in its ``chat {model}`` span, counted and timed
    (``providers/metrics.py``). Raises what ``complete`` raises."""
    attributes = _chat_attributes(provider, kind, model)
    with traced_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes, error_type=failure_class):
        reply = provider_call_timed(complete, provider=provider, model=model)
        usage = reply.usage
        span_annotate(
            {
                "gen_ai.usage.input_tokens": usage.prompt_tokens,
                "gen_ai.usage.output_tokens": usage.completion_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
                "gen_ai.response.finish_reasons": [reply.finish_reason],
            }
        )
        return reply
