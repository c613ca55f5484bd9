"""Writes for the gateway, by topic: governed calls outside any run, one completion and its record
(:mod:`.completions`); governed embeddings (:mod:`.embeddings`); stored responses of the Responses API (:mod:`.responses`).

The app's services are imported from here.
"""

from gateway.services.completions import Completion, CompletionCall
from gateway.services.embeddings import Embeddings, EmbeddingsCall, embeddings_create, embeddings_prepare
from gateway.services.responses import stored_response_create

__all__ = [
    "Completion",
    "CompletionCall",
    "Embeddings",
    "EmbeddingsCall",
    "embeddings_create",
    "embeddings_prepare",
    "stored_response_create",
]
