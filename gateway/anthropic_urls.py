"""The Anthropic Messages API's routes, included under ``/api/anthropic/v1/``
(gateway/apis/anthropic_messages.py). Anthropic's clients add ``/v1/messages`` to their base URL, so
theirs is ``…/api/anthropic``."""

from __future__ import annotations

from django.urls import path

from gateway.apis.anthropic_messages import CountTokensApi, MessagesApi

urlpatterns = [
    path("messages", MessagesApi.as_view(), name="anthropic-messages"),
    path("messages/count_tokens", CountTokensApi.as_view(), name="anthropic-count-tokens"),
]
