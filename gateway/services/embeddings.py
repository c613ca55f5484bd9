"""Governed embeddings outside any run: one call (``agents/runtime/embedding.py``) and its ledger row."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal

from agents.runtime.budget import client_limits
from agents.runtime.embedding import Embedded, EmbeddingRequest, PreparedEmbedding, embedding_prepare
from agents.runtime.plan import configuration_receiver, receiver_name
from catalog.errors import ConfigurationInactive
from catalog.models import ApiClient, Configuration
from config.logs import log_context_update
from gateway.services.completions import completion_record
from governance.services import EventContext
from providers.dispatch import Dispatched
from providers.values import EmbeddingReply


@dataclass(frozen=True)
class Embeddings:
    """An answered embedding call, its request id (its governance events carry it) and its cost at
    the serving model's prices (None: the provider reported no usage)."""

    request_id: str
    embedded: Embedded
    cost: Decimal | None


@dataclass(frozen=True)
class EmbeddingsCall:
    """An embedding call for an API client, prepared up to its dispatch (:func:`embeddings_prepare`):
    sent blocking by :meth:`create`, or dispatched on an event loop (``prepared.dispatch()``) and then
    :meth:`finished` (or ``prepared.failed()``) in the request's thread."""

    request_id: str
    configuration: Configuration
    api_client: ApiClient
    prepared: PreparedEmbedding

    def create(self) -> Embeddings:
        """The call sent blocking and written to the ledger. Raises :class:`ProviderError`."""
        return self._recorded(self.prepared.send())

    def finished(self, dispatched: Dispatched[EmbeddingReply]) -> Embeddings:
        """The call answered by ``dispatched`` (made on the loop) and written to the ledger."""
        return self._recorded(self.prepared.answered(dispatched))

    def _recorded(self, embedded: Embedded) -> Embeddings:
        record = completion_record(
            request_id=self.request_id,
            api_client=self.api_client,
            configuration=self.configuration,
            served=embedded.served,
            usage=embedded.usage,
        )
        return Embeddings(request_id=self.request_id, embedded=embedded, cost=record.cost)


def embeddings_prepare(
    *, configuration: Configuration, api_client: ApiClient, request: EmbeddingRequest
) -> EmbeddingsCall:
    """The governed embedding call of ``request`` for ``api_client`` (the receiver of the vectors),
    charged to its budget and written to the ledger as a completion is, prepared up to its dispatch.
    Raises :class:`ConfigurationInactive` and whatever
    :func:`~agents.runtime.embedding.embedding_prepare` raises (a refusal names the request id;
    nothing was sent)."""
    if not configuration.is_active:
        raise ConfigurationInactive(f"Configuration {configuration.identifier!r} is not active.")
    request_id = uuid.uuid4().hex
    log_context_update(correlation_id=request_id)
    events = EventContext(
        correlation_id=request_id,
        provider=configuration.model.provider.identifier,
        model=configuration.model.model_id,
        configuration=configuration.identifier,
        api_client=api_client.name,
    )
    prepared = embedding_prepare(
        configuration=configuration,
        request=request,
        events=events,
        receiver=configuration_receiver(configuration, api_client.zone, receiver_name(api_client)),
        client_id=api_client.pk,
        limits=client_limits(api_client),
    )
    return EmbeddingsCall(request_id, configuration, api_client, prepared)


def embeddings_create(
    *, configuration: Configuration, api_client: ApiClient, request: EmbeddingRequest
) -> Embeddings:
    """:func:`embeddings_prepare`, sent blocking."""
    return embeddings_prepare(configuration=configuration, api_client=api_client, request=request).create()
