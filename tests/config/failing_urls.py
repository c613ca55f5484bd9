"""The project's URLs plus test-only views that fail unexpectedly: two API views (DRF and plain
Django), one under the OpenAI API and one page outside the API."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.request import Request
from rest_framework.views import APIView

from config.urls import urlpatterns as project_urlpatterns


class FailingApi(APIView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = []

    def post(self, request: Request) -> HttpResponse:
        raise RuntimeError(f"unexpected failure while handling {request.data!r}")


def failing_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(f"unexpected failure while handling {request.body!r}")


urlpatterns = [
    path("api/v1/test-failing-api", FailingApi.as_view()),
    path("api/v1/test-failing-view", failing_view),
    path("api/openai/v1/test-failing-view", failing_view),
    path("test-failing-page", failing_view),
    *project_urlpatterns,
]
