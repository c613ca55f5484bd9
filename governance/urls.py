"""The governance API routes, included under ``/api/v1/``."""

from __future__ import annotations

from django.urls import path

from governance.apis import GovernanceEventListApi, ReadinessApi

urlpatterns = [
    path("governance/events", GovernanceEventListApi.as_view(), name="governance-event-list"),
    path("governance/readiness", ReadinessApi.as_view(), name="governance-readiness"),
]
