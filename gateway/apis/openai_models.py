"""``GET /api/openai/v1/models``: the configurations a client may use, as OpenAI models, each with
its model's modalities (text; text or embedding), window and reply limit (extension fields)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from catalog.models import Configuration
from catalog.selectors import configuration_list_for_client
from gateway.apis.context import client_configuration, client_of
from gateway.apis.openai_compat import TAG, OpenAIApiView, openai_errors


class ModelSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="A configuration identifier.")
    object = serializers.CharField()
    created = serializers.IntegerField()
    owned_by = serializers.CharField()
    modalities = serializers.DictField(
        help_text="Extension: input and output modalities of the configuration's model (text; text or "
        "embedding)."
    )
    context_window = serializers.IntegerField(help_text="Extension: the model's window, in tokens.")
    max_output_tokens = serializers.IntegerField(help_text="Extension: the model's reply limit, in tokens.")

    class Meta:
        ref_name = "OpenAIModel"


class ModelListSerializer(serializers.Serializer):
    object = serializers.CharField()
    data = ModelSerializer(many=True)

    class Meta:
        ref_name = "OpenAIModelList"


class ModelListApi(OpenAIApiView):
    @extend_schema(
        tags=[TAG],
        summary="List the configurations this client may use, as OpenAI models",
        operation_id="openai_models_list",
        responses={200: ModelListSerializer, **openai_errors()},
    )
    def get(self, request: Request) -> Response:
        configurations = (
            configuration_list_for_client(api_client=client_of(request))
            .filter(is_active=True)
            .select_related("model")
        )
        return Response({"object": "list", "data": [_model(c) for c in configurations]})


class ModelDetailApi(OpenAIApiView):
    @extend_schema(
        tags=[TAG],
        summary="One configuration this client may use, as an OpenAI model",
        operation_id="openai_models_retrieve",
        responses={200: ModelSerializer, **openai_errors(404)},
    )
    def get(self, request: Request, model: str) -> Response:
        return Response(_model(client_configuration(request, model)))


def _model(configuration: Configuration) -> dict[str, Any]:
    model = configuration.model
    inputs, outputs = model.modalities
    return {
        "id": configuration.identifier,
        "object": "model",
        "created": 0,
        "owned_by": "governed",
        "modalities": {"input": inputs, "output": outputs},
        "context_window": model.context_window,
        "max_output_tokens": model.max_output_tokens,
    }
