"""The snippets API routes, included under ``/api/v1/``."""

from __future__ import annotations

from django.urls import path

from snippets.apis import SnippetCollectionApi, SnippetDetailApi

urlpatterns = [
    path("snippets", SnippetCollectionApi.as_view(), name="snippet-collection"),
    path("snippets/<str:identifier>", SnippetDetailApi.as_view(), name="snippet-detail"),
]
