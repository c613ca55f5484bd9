"""One governed embedding call: the same gate, redaction, budget, metrics and receipt as a completion.

A completion's :class:`~agents.runtime.send.GovernedCall` carries a send plan: a configuration's prompt,
snippets and skills assembled into messages and fitted to a window. An embedding call has none of
these (its configuration's prompt, snippets and skills are never sent: only the caller's inputs are),
so it is planned here, and passes the very functions a completion passes, in the same order
(docs/decisions/0036-governed-embeddings.md):

1. the targets: the configuration's model and fallbacks that embed (the catalogue's ``embeds``) and
   are active; a model that does not embed is a 400 naming it, before anything else;
2. redaction of every input (:class:`~agents.runtime.redactions.Redactions`): a text as any text is
   redacted; a token array decoded with the model's tokenizer, redacted, and encoded again when a
   secret was found (an array for a model whose tokenizer is not known cannot be read, so it is
   refused rather than sent unscreened);
3. the gate: each input a source of kind ``task_input`` at the request's class, decided for the
   zone of the targets and the receiver that gets the vectors
   (:func:`governance.services.assert_permitted`: events recorded, a refusal raised, nothing sent);
   the redaction events;
4. the budget: the inputs' estimate (the one estimator) reserved from the client's day
   (:func:`~agents.runtime.budget.budget_reserve`), settled with the reported usage or released;
5. the dispatch with retries and fallbacks, each attempt counted and traced
   (:func:`providers.embeddings.embed_with_fallbacks`); steps 1 to 4 are :func:`embedding_prepare`, so
   a request served under ASGI awaits the dispatch on the event loop, as a completion does
   (``gateway/apis/openai_embeddings.py``);
6. the receipt (:func:`~agents.runtime.receipts.decision_receipt`).

A vector is derived from its input: its label is the input's class, and the receiver supplied the
input, so the gate never refuses the vectors to it (DESIGN §4, "Information flow").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.runtime.budget import ClientLimits, Reservation, budget_reserve, send_estimate
from agents.runtime.plan import active_targets, model_profile, provider_config
from agents.runtime.receipts import decision_receipt
from agents.runtime.redactions import Redactions, redaction_events_record
from catalog.errors import ModalityUnsupported, ModelInactive
from catalog.models import Configuration, LlmModel
from catalog.selectors import configuration_zone
from config.errors import ApplicationError
from context_assembly.encodings import get_encoding
from context_assembly.estimator import Estimator
from governance.errors import ContextRefused
from governance.policy import ContextDecision, Receiver, Source
from governance.services import EventContext, assert_permitted, enforced_event_record
from governance.vocabulary import Decision, Enforcement, SourceKind, TrustZone
from providers.dispatch import Dispatched, Target
from providers.embeddings import aembed_with_fallbacks, embed_with_fallbacks
from providers.failures import ProviderError
from providers.values import EmbeddingCall, EmbeddingInput, EmbeddingReply, Usage

EMBEDDING = "embedding"


class EmbeddingInputUnreadable(ApplicationError):
    """A token array for a model whose tokenizer is not known: it cannot be screened, so it is not
    sent. ``extra["field"]`` names the input."""

    code = "invalid_value"


class DimensionsTooLarge(ApplicationError):
    """``dimensions`` is above the length of the model's vectors. ``extra`` names the ``model`` and
    its ``limit``."""

    code = "invalid_value"


@dataclass(frozen=True)
class EmbeddingRequest:
    """What the caller asked for: its inputs (texts or token arrays), their class, the vector length."""

    inputs: tuple[EmbeddingInput, ...]
    data_class: str
    dimensions: int | None = None


@dataclass(frozen=True)
class Embedded:
    """The answered call: one vector per input, the model that served, its usage (prompt tokens), the
    decision, the secrets redacted from the inputs by kind, and the content-free receipt."""

    vectors: tuple[tuple[float, ...], ...]
    served: LlmModel
    usage: Usage
    decision: ContextDecision
    redactions: dict[str, int]
    receipt: dict[str, Any]


def embedding_models(configuration: Configuration) -> tuple[LlmModel, ...]:
    """``configuration``'s model and its fallbacks that embed, in order; raises
    :class:`ModalityUnsupported` when its own model does not (nothing is sent)."""
    if not configuration.model.embeds:
        raise ModalityUnsupported(
            f"Model {configuration.model} of configuration {configuration.identifier!r} does not answer "
            "embeddings (the catalogue does not declare it an embedding model). Nothing was sent.",
            extra={"model": str(configuration.model), "modality": EMBEDDING},
        )
    return tuple(m for m in (configuration.model, *configuration.fallbacks.all()) if m.embeds)


@dataclass
class PreparedEmbedding:
    """An embedding call prepared up to its dispatch (steps 1 to 4 done: the inputs redacted, the gate
    passed, the budget reserved): sent by :meth:`send` (blocking), or dispatched on an event loop by
    :meth:`dispatch` and then :meth:`answered` (or :meth:`failed`) in the thread that prepared it
    (both read the database; the dispatch does not)."""

    active: tuple[LlmModel, ...]
    targets: tuple[Target, ...]
    call: EmbeddingCall
    decision: ContextDecision
    redactions: dict[str, int]
    reservation: Reservation

    def send(self) -> Embedded:
        """Dispatch blocking and answer. Raises :class:`ProviderError` (the reservation released)."""
        try:
            dispatched = embed_with_fallbacks(self.targets, self.call)
        except ProviderError:
            self.failed()
            raise
        return self.answered(dispatched)

    async def dispatch(self) -> Dispatched[EmbeddingReply]:
        """The dispatch awaited on the running event loop (no database is read). Raises
        :class:`ProviderError`; then :meth:`failed` must follow."""
        return await aembed_with_fallbacks(self.targets, self.call)

    def failed(self) -> None:
        """Every attempt failed: the reservation is released."""
        self.reservation.release()

    def answered(self, dispatched: Dispatched[EmbeddingReply]) -> Embedded:
        """The call answered by ``dispatched``: the reservation settled, the receipt made."""
        served, reply = self.active[dispatched.served_index], dispatched.answer
        self.reservation.settle(served=served, usage=reply.usage)
        sent = dict(self.redactions)
        return Embedded(
            vectors=reply.vectors,
            served=served,
            usage=reply.usage,
            decision=self.decision,
            redactions=sent,
            receipt=decision_receipt(
                decision=self.decision, served=served, sent_redactions=sent, reply_redactions={}
            ),
        )


def governed_embedding(
    *,
    configuration: Configuration,
    request: EmbeddingRequest,
    events: EventContext,
    receiver: Receiver | None,
    client_id: int | None,
    limits: ClientLimits | None = None,
) -> Embedded:
    """The embedding call of ``request``, sent blocking: :func:`embedding_prepare`, then
    :meth:`PreparedEmbedding.send`; raises what they raise."""
    return embedding_prepare(
        configuration=configuration,
        request=request,
        events=events,
        receiver=receiver,
        client_id=client_id,
        limits=limits,
    ).send()


def embedding_prepare(
    *,
    configuration: Configuration,
    request: EmbeddingRequest,
    events: EventContext,
    receiver: Receiver | None,
    client_id: int | None,
    limits: ClientLimits | None = None,
) -> PreparedEmbedding:
    """The embedding call of ``request`` up to its dispatch (see the module docstring). Raises
    :class:`ModalityUnsupported`, :class:`DimensionsTooLarge`, :class:`EmbeddingInputUnreadable`,
    :class:`ModelInactive` (every target switched off), :class:`ContextRefused` (an input above the
    zone) or :class:`~agents.errors.BudgetExhausted`; nothing is sent then. Its dispatch raises
    :class:`ProviderError` (sent, every attempt failed)."""
    active, _ = active_targets(embedding_models(configuration))
    if not active:
        enforced_event_record(
            context=events, decision=Decision.MODEL_INACTIVE, reason="no active embedding model"
        )
        raise ModelInactive(
            f"Configuration '{configuration.identifier}' has no active embedding model. Nothing was sent.",
            extra={"inactive": [str(configuration.model)]},
        )
    _dimensions_check(active, request.dimensions)
    zone = configuration_zone(configuration, serving_model=active[0], fallbacks=active[1:])
    estimator = Estimator(model_profile(active[0]))
    redactions = Redactions()
    inputs = tuple(_redacted(item, index, estimator, redactions) for index, item in enumerate(request.inputs))
    decision = _permitted(request, zone, events, receiver)
    redaction_events_record(counts=redactions.counts, context=events, zone=zone)
    estimated = sum(len(item) if isinstance(item, tuple) else estimator.count_text(item) for item in inputs)
    estimate = send_estimate(prompt_tokens=estimated, max_output_tokens=0, models=list(active))
    reservation = budget_reserve(
        client_id=client_id, estimate=estimate, events=events, zone=zone, limits=limits
    )
    return PreparedEmbedding(
        active=active,
        targets=tuple(Target(provider_config(m), m.model_id) for m in active),
        call=EmbeddingCall(model_id=active[0].model_id, inputs=inputs, dimensions=request.dimensions),
        decision=decision,
        redactions=dict(redactions.counts),
        reservation=reservation,
    )


def input_sources(request: EmbeddingRequest) -> tuple[Source, ...]:
    """Each input as a source at the request's class: ``input`` for one, ``input[i]`` for several."""
    names = ["input"] if len(request.inputs) == 1 else [f"input[{i}]" for i in range(len(request.inputs))]
    return tuple(
        Source(SourceKind.TASK_INPUT, name, request.data_class, None, Enforcement.ENFORCE) for name in names
    )


def _permitted(
    request: EmbeddingRequest, zone: TrustZone, events: EventContext, receiver: Receiver | None
) -> ContextDecision:
    try:
        return assert_permitted(sources=input_sources(request), zone=zone, context=events, receiver=receiver)
    except ContextRefused as refusal:
        refusal.extra = {**refusal.extra, "request_id": events.correlation_id}
        raise


def _dimensions_check(models: Sequence[LlmModel], dimensions: int | None) -> None:
    """A ``dimensions`` longer than a target's declared vectors is refused before anything is sent."""
    if dimensions is None:
        return
    for model in models:
        if model.embedding_dimensions is not None and dimensions > model.embedding_dimensions:
            raise DimensionsTooLarge(
                f"dimensions {dimensions} is above the {model.embedding_dimensions} of model {model}.",
                extra={"param": "dimensions", "model": str(model), "limit": model.embedding_dimensions},
            )


def _redacted(
    item: EmbeddingInput, index: int, estimator: Estimator, redactions: Redactions
) -> EmbeddingInput:
    """``item`` redacted: a text as a text; a token array read with the model's tokenizer."""
    if isinstance(item, str):
        return redactions.text(item)
    if not estimator.is_exact:
        raise EmbeddingInputUnreadable(
            f"input[{index}] is a token array, and the model's tokenizer is not known: it cannot be "
            "screened, so it is not sent. Send the text instead.",
            extra={"param": f"input[{index}]"},
        )
    encoding = get_encoding(estimator.encoding_name)
    try:
        text = encoding.decode(list(item), errors="strict")
    except (KeyError, ValueError, UnicodeDecodeError):
        raise EmbeddingInputUnreadable(
            f"input[{index}] holds tokens the model's tokenizer does not decode to text, so it cannot be "
            "screened and is not sent.",
            extra={"param": f"input[{index}]"},
        ) from None
    redacted = redactions.text(text)
    return item if redacted is text else tuple(encoding.encode_ordinary(redacted))
