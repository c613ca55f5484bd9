"""``POST /api/openai/v1/embeddings``: OpenAI's Embeddings API, governed as a completion is.

``model`` is a configuration identifier whose model embeds (the catalogue's ``embeds``); ``input`` is a
string, a list of strings, a token array or a list of token arrays. Every input is a source at the
``X-Data-Class`` header's class (else the client's default), checked against the zone of the models
that may answer; a refused input sends nothing (``agents/runtime/embedding.py``). Vectors are answered
as floats, or, with ``encoding_format: "base64"`` (what the ``openai`` SDK asks for by default), as
little-endian float32 bytes in base64. Under ASGI the call is prepared in the request's thread and
its provider is awaited on the server's event loop, as a completion's is (``gateway/apis/serving.py``). ``user`` is accepted and never forwarded (an end user's
identifier is the caller's data). Extensions: ``governance`` and ``governance_receipt``, as on a chat
completion.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpResponseBase
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents.runtime.embedding import EmbeddingRequest
from config.api import validated
from config.deferred_start import deferred_start
from config.request_thread import release_connections
from gateway.apis.answered_later import AnsweredLater
from gateway.apis.context import ReceiptSerializer, client_configuration, client_of
from gateway.apis.openai_compat import TAG, OpenAIErrors, data_class_header, declared_class, openai_errors
from gateway.services import Embeddings, EmbeddingsCall, embeddings_prepare
from governance.services import decision_as_dict
from providers.failures import ProviderError
from providers.values import EmbeddingInput

MAX_INPUTS = 2048  # OpenAI's limit
MAX_TOKEN = 2**32  # no tokenizer has more tokens; a larger value is not a token
MAX_DIMENSIONS = 65_536


class EmbeddingInputSerializer(serializers.Serializer):
    model = serializers.SlugField(max_length=100, help_text="A configuration identifier this client may use.")
    input = serializers.JSONField(
        help_text=f"A string, a list of strings, a token array or a list of token arrays (at most {MAX_INPUTS})."
    )
    encoding_format = serializers.ChoiceField(choices=["float", "base64"], required=False, default="float")
    dimensions = serializers.IntegerField(
        min_value=1, max_value=MAX_DIMENSIONS, required=False, allow_null=True
    )
    user = serializers.CharField(
        max_length=256, required=False, allow_null=True, allow_blank=True, help_text="Never forwarded."
    )

    class Meta:
        ref_name = "EmbeddingInput"

    def validate_input(self, value: Any) -> tuple[EmbeddingInput, ...]:
        return embedding_inputs(value)


def embedding_inputs(value: Any) -> tuple[EmbeddingInput, ...]:
    """``input`` as the call's inputs; anything else is a 400 naming what is wrong."""
    if isinstance(value, str):
        value = [value]
    elif isinstance(value, list) and value and all(_is_token(item) for item in value):
        value = [value]  # one token array
    if not isinstance(value, list) or not value:
        raise serializers.ValidationError("Expected a string, a list of strings or token arrays.")
    if len(value) > MAX_INPUTS:
        raise serializers.ValidationError(f"At most {MAX_INPUTS} inputs.")
    inputs: list[EmbeddingInput] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item:
            inputs.append(item)
        elif isinstance(item, list) and item and all(_is_token(token) for token in item):
            inputs.append(tuple(item))
        else:
            raise serializers.ValidationError(f"input[{index}]: expected a non-empty string or token array.")
    return tuple(inputs)


def _is_token(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_TOKEN


class EmbeddingListSerializer(serializers.Serializer):
    object = serializers.CharField()
    data = serializers.ListField(
        child=serializers.DictField(), help_text="object, index, embedding (floats, or base64 float32)."
    )
    model = serializers.CharField(help_text="The configuration identifier.")
    usage = serializers.DictField(help_text="prompt_tokens, total_tokens, provenance.")
    governance = serializers.DictField(help_text="request_id, served_model, decision, redactions, cost.")
    governance_receipt = ReceiptSerializer()

    class Meta:
        ref_name = "EmbeddingList"


class EmbeddingsApi(OpenAIErrors, AnsweredLater):
    @extend_schema(
        tags=[TAG],
        summary="Create embeddings (OpenAI-compatible, governed)",
        operation_id="openai_embeddings_create",
        description=(
            "OpenAI's Embeddings API; ``model`` is a configuration identifier whose model embeds. Each "
            "input is a source at the request's class, checked against the zone before anything is sent; "
            "secrets are redacted; the call is charged to the client's budget."
        ),
        request=EmbeddingInputSerializer,
        parameters=[data_class_header("inputs")],
        responses={200: OpenApiResponse(EmbeddingListSerializer), **openai_errors(400, 404, 409, 502)},
    )
    def post(self, request: Request) -> HttpResponseBase:
        data = validated(EmbeddingInputSerializer, request.data)
        start = deferred_start(request) if self.asgi else None
        configuration = client_configuration(request, data["model"])
        client = client_of(request)
        call = embeddings_prepare(
            configuration=configuration,
            api_client=client,
            request=EmbeddingRequest(
                inputs=data["input"],
                data_class=declared_class(request, client),
                dimensions=data.get("dimensions"),
            ),
        )

        def body(answer: Embeddings) -> Response:
            return Response(
                embeddings_body(answer, model=configuration.identifier, encoding=data["encoding_format"])
            )

        if start is None:  # WSGI: made here, blocking
            return body(call.create())
        release_connections()  # nothing is held while the provider answers

        async def answer() -> HttpResponseBase:
            answered = await self.dispatched(call)
            return await sync_to_async(lambda: self.rendered(body(answered)), thread_sensitive=True)()

        return self.answer_later(start, answer)

    async def dispatched(self, call: EmbeddingsCall) -> Embeddings:
        """``call`` (prepared in the request's thread) dispatched on the server's event loop, as a
        completion is (``gateway/apis/serving.py``), and finished in a request thread again."""
        try:
            dispatched = await call.prepared.dispatch()
        except ProviderError:
            await sync_to_async(call.prepared.failed, thread_sensitive=True)()
            raise
        return await sync_to_async(call.finished, thread_sensitive=True)(dispatched)


def embeddings_body(answer: Embeddings, *, model: str, encoding: str) -> dict[str, Any]:
    """OpenAI's list of embeddings, with the call's usage, governance and receipt."""
    embedded = answer.embedded
    prompt = embedded.usage.prompt_tokens or 0
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": _encoded(vector, encoding)}
            for index, vector in enumerate(embedded.vectors)
        ],
        "model": model,
        "usage": {
            "prompt_tokens": prompt,
            "total_tokens": prompt,
            "provenance": embedded.usage.provenance.value,
        },
        "governance": {
            "request_id": answer.request_id,
            "served_model": embedded.served.model_id,
            "decision": decision_as_dict(embedded.decision),
            "redactions": {"sent": embedded.redactions},
            "cost": format(answer.cost, "f") if answer.cost is not None else None,
        },
        "governance_receipt": embedded.receipt,
    }


def _encoded(vector: tuple[float, ...], encoding: str) -> list[float] | str:
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return list(vector)
