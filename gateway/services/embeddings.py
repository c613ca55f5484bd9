"""Governed embeddings outside any run: one call (``agents/runtime/embedding.py``) and its ledger row."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal

from agents.runtime.budget import client_limits
from agents.runtime.embedding import Embedded, EmbeddingRequest, governed_embedding
from agents.runtime.plan import configuration_receiver, receiver_name
from catalog.errors import ConfigurationInactive
from catalog.models import ApiClient, Configuration
from config.logs import log_context_update
from gateway.services.completions import completion_record
from governance.services import EventContext


@dataclass(frozen=True)
class Embeddings:
    """An answered embedding call, its request id (its governance events carry it) and its cost at
    the serving model's prices (None: the provider reported no usage)."""

    request_id: str
    embedded: Embedded
    cost: Decimal | None


def embeddings_create(
    *, configuration: Configuration, api_client: ApiClient, request: EmbeddingRequest
) -> Embeddings:
    """The governed embedding call of ``request`` for ``api_client`` (the receiver of the vectors),
    charged to its budget and written to the ledger as a completion is. Raises
    :class:`ConfigurationInactive` and whatever :func:`~agents.runtime.embedding.governed_embedding`
    raises (a refusal names the request id; nothing was sent)."""
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
    embedded = governed_embedding(
        configuration=configuration,
        request=request,
        events=events,
        receiver=configuration_receiver(configuration, api_client.zone, receiver_name(api_client)),
        client_id=api_client.pk,
        limits=client_limits(api_client),
    )
    record = completion_record(
        request_id=request_id,
        api_client=api_client,
        configuration=configuration,
        served=embedded.served,
        usage=embedded.usage,
    )
    return Embeddings(request_id=request_id, embedded=embedded, cost=record.cost)
