"""The OpenAI-compatible API's routes, included under ``/api/openai/v1/`` (gateway/apis/openai_compat.py)."""

from __future__ import annotations

from django.urls import path

from gateway.apis.openai_compat import ChatCompletionsApi
from gateway.apis.openai_embeddings import EmbeddingsApi
from gateway.apis.openai_models import ModelDetailApi, ModelListApi
from gateway.apis.openai_responses import ResponsesApi

urlpatterns = [
    path("chat/completions", ChatCompletionsApi.as_view(), name="openai-chat-completions"),
    path("responses", ResponsesApi.as_view(), name="openai-responses"),
    path("embeddings", EmbeddingsApi.as_view(), name="openai-embeddings"),
    path("models", ModelListApi.as_view(), name="openai-model-list"),
    path("models/<str:model>", ModelDetailApi.as_view(), name="openai-model-detail"),
]
