"""Embeddings across the provider boundary: one call, its reply, and its dispatch over the targets.

An embedding call is not a completion: no messages, no tools, no reply limit, no stream. It carries the
inputs (each a text, or a token array for a model whose tokenizer is known) exactly as they go on the
wire: the runtime redacted every text and every decoded token array before building it, and the body
adds nothing an adapter derives from them, so the per-input pass is the pass over the final payload
(``agents/runtime/embedding.py``).

The dispatch follows the completion's policy (``providers/dispatch.py``) with the same figures: each
target up to ``1 + max_retries`` attempts, only retryable failures retried after
:func:`~providers.dispatch.backoff_seconds`, a non-retryable failure stopping everything, the next
target tried when one's retries are exhausted, and every attempt listed on the last error. Each
attempt is traced (an ``embeddings {model}`` span), counted and timed as a completion's is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial

from opentelemetry.trace import SpanKind

from config.tracing import span_annotate, traced_span
from providers.adapters import ADAPTER_POOL
from providers.dispatch import Attempt, Dispatched, Target, backoff_seconds
from providers.failures import FailureClass, ProviderError
from providers.metrics import failure_class, provider_call_timed
from providers.telemetry import GEN_AI_PROVIDERS
from providers.values import EmbeddingCall, EmbeddingReply


def embed_with_fallbacks(
    targets: Sequence[Target], call: EmbeddingCall, *, sleep: Callable[[float], None] = time.sleep
) -> Dispatched[EmbeddingReply]:
    """``call`` answered by the first target that answers it (the policy of the module docstring);
    ``call.model_id`` is replaced by each target's. Raises :class:`ProviderError` with every attempt."""
    attempts: list[Attempt] = []
    error: ProviderError | None = None
    for index, target in enumerate(targets):
        config, model_id, _ = Target(*target)
        target_call = EmbeddingCall(model_id=model_id, inputs=call.inputs, dimensions=call.dimensions)
        for retry in range(1 + config.max_retries):
            if retry:
                assert error is not None
                sleep(backoff_seconds(retry - 1, error.retry_after))
            try:
                adapter = ADAPTER_POOL.get(config)
                reply = _observed(
                    partial(adapter.embed, target_call),
                    provider=config.identifier,
                    kind=config.kind,
                    model=model_id,
                )
            except ProviderError as exc:
                attempts.append(
                    Attempt(
                        index, config.identifier, model_id, exc.failure_class, exc.retry_after, exc.status
                    )
                )
                error = exc
                if not exc.retryable:
                    break
                continue
            attempts.append(Attempt(index, config.identifier, model_id, None))
            return Dispatched(reply, index, tuple(attempts))
        if error is not None and not error.retryable:
            break
    if error is None:
        error = ProviderError(
            "no provider to send the call to", failure_class=FailureClass.CONFIGURATION, provider=""
        )
    error.attempts = tuple(attempts)
    error.extra = {**error.extra, "attempts": [_attempt_dict(attempt) for attempt in attempts]}
    raise error


def _observed(embed: Callable[[], EmbeddingReply], *, provider: str, kind: str, model: str) -> EmbeddingReply:
    attributes = {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": GEN_AI_PROVIDERS.get(kind, kind),
        "gen_ai.request.model": model,
        "govctx.provider": provider,
    }
    with traced_span(
        f"embeddings {model}", kind=SpanKind.CLIENT, attributes=attributes, error_type=failure_class
    ):
        reply = provider_call_timed(embed, provider=provider, model=model)
        span_annotate({"gen_ai.usage.input_tokens": reply.usage.prompt_tokens})
        return reply


def _attempt_dict(attempt: Attempt) -> dict[str, object]:
    return {
        "target_index": attempt.target_index,
        "provider": attempt.provider,
        "model_id": attempt.model_id,
        "failure_class": attempt.failure_class.value if attempt.failure_class else None,
        "retry_after": attempt.retry_after,
        "status": attempt.status,
    }
