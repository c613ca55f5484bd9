"""The agents app's API routes, included under ``/api/v1/``."""

from __future__ import annotations

from django.urls import path

from gateway.apis.approvals import RunApprovalDecisionApi, RunApprovalListApi
from gateway.apis.budget import BudgetApi
from gateway.apis.completions import CompletionApi, ContextPreviewApi
from gateway.apis.configurations import ConfigurationListApi, DeclassificationApi
from gateway.apis.governance import GovernanceEventListApi, ReadinessApi
from gateway.apis.run_events import RunEventsApi
from gateway.apis.runs import RunCancelApi, RunCollectionApi, RunDetailApi
from gateway.apis.scores import ScoreApi

urlpatterns = [
    path("budget", BudgetApi.as_view(), name="budget"),
    path("configurations", ConfigurationListApi.as_view(), name="configuration-list"),
    path(
        "configurations/<slug:identifier>/declassification",
        DeclassificationApi.as_view(),
        name="configuration-declassification",
    ),
    path("context/preview", ContextPreviewApi.as_view(), name="context-preview"),
    path("completions", CompletionApi.as_view(), name="completions"),
    path("runs", RunCollectionApi.as_view(), name="run-collection"),
    path("runs/<str:run_id>", RunDetailApi.as_view(), name="run-detail"),
    path("runs/<str:run_id>/cancel", RunCancelApi.as_view(), name="run-cancel"),
    path("runs/<str:run_id>/events", RunEventsApi.as_view(), name="run-events"),
    path("runs/<str:run_id>/approvals", RunApprovalListApi.as_view(), name="run-approval-list"),
    path(
        "runs/<str:run_id>/approvals/<str:approval_id>",
        RunApprovalDecisionApi.as_view(),
        name="run-approval-decision",
    ),
    path("scores", ScoreApi.as_view(), name="scores"),
    path("governance/events", GovernanceEventListApi.as_view(), name="governance-event-list"),
    path("governance/readiness", ReadinessApi.as_view(), name="governance-readiness"),
]
