"""``GET runs/{id}/events``: Server-Sent Events of a run's steps, then the run once it is terminal.

One ``step`` event per recorded step (``id`` = the step index, ``data`` = the step as in the run
detail), then one ``run`` event with the run summary when the run has finished. The stream carries
no transcript text: steps are figures and codes, the summary's error message is stored redacted and
names sources by identifier and position only. ``Last-Event-ID``
resumes after that step. The stream polls the database every :data:`POLL_SECONDS` and ends after
``?timeout=`` seconds (default 30, at most 120) with a ``timeout`` event, so a client reconnects
with ``Last-Event-ID`` instead of holding a worker forever.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from agents.apis.run_output import RunSummarySerializer, StepSerializer, run_summary_body, step_body
from agents.apis.runs import client_run
from agents.models import AgentRun, AgentStep
from config.api import error_responses

POLL_SECONDS = 0.5
KEEPALIVE_SECONDS = 15.0
DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 120


class JsonErrorsNegotiation(BaseContentNegotiation):
    """The stream bypasses renderers; whatever the client accepts (an EventSource sends
    ``Accept: text/event-stream``), an error before the stream starts is the one JSON error format."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: str | None = None) -> Any:
        renderer = JSONRenderer()
        return renderer, renderer.media_type


def sse(event: str, data: Any, *, event_id: int | None = None) -> str:
    lines = [f"id: {event_id}"] if event_id is not None else []
    lines += [f"event: {event}", "data: " + json.dumps(data, cls=DjangoJSONEncoder, separators=(",", ":"))]
    return "\n".join(lines) + "\n\n"


def _last_event_id(request: Request) -> int:
    raw = request.headers.get("Last-Event-ID", "").strip()
    return int(raw) if raw.isdigit() and len(raw) < 10 else -1


def run_event_stream(run: AgentRun, *, after: int, timeout: float) -> Iterator[str]:
    """Steps with an index above ``after`` as they land, then the run when it is terminal.

    The run's status is read **before** its steps on every poll: a run seen terminal has stored all
    its steps, so the final poll cannot miss one that landed in between.
    """
    deadline = time.monotonic() + timeout
    last_write = time.monotonic()
    serving = run.configuration.model
    yield "retry: 2000\n\n"
    while True:
        current = AgentRun.objects.select_related("configuration").get(pk=run.pk)
        steps = AgentStep.objects.filter(run_id=run.pk, index__gt=after).select_related("model")
        for step in steps.order_by("index"):
            yield sse("step", StepSerializer(step_body(step, serving)).data, event_id=step.index)
            after, last_write = step.index, time.monotonic()
        if current.is_terminal:
            yield sse("run", RunSummarySerializer(run_summary_body(current)).data)
            return
        if time.monotonic() >= deadline:
            yield sse("timeout", {"run": str(run.pk), "status": current.status, "last_event_id": after})
            return
        if time.monotonic() - last_write >= KEEPALIVE_SECONDS:
            yield ": keep-alive\n\n"
            last_write = time.monotonic()
        time.sleep(POLL_SECONDS)


class RunEventsApi(APIView):
    required_scope = "runs:read"
    content_negotiation_class = JsonErrorsNegotiation

    class FilterSerializer(serializers.Serializer):
        timeout = serializers.IntegerField(min_value=0, max_value=MAX_TIMEOUT, default=DEFAULT_TIMEOUT)

        class Meta:
            ref_name = "RunEventsFilter"

    @extend_schema(
        tags=["runs"],
        summary="Stream a run's steps as Server-Sent Events",
        description=(
            "Events: `step` (id = step index, data = a Step), `run` (data = the run summary; last), "
            "`timeout` (the stream's time is up; reconnect with Last-Event-ID). Resume with the "
            "`Last-Event-ID` header."
        ),
        parameters=[
            FilterSerializer,
            OpenApiParameter("Last-Event-ID", OpenApiTypes.INT, OpenApiParameter.HEADER, required=False),
        ],
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                OpenApiTypes.STR, description="text/event-stream of step, run and timeout events."
            ),
            **error_responses(400, 404),
        },
    )
    def get(self, request: Request, run_id: str) -> StreamingHttpResponse:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        run = client_run(request, run_id)
        stream = run_event_stream(
            run, after=_last_event_id(request), timeout=filters.validated_data["timeout"]
        )
        response = StreamingHttpResponse(stream, content_type="text/event-stream; charset=utf-8")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # a proxy must pass events through, not buffer them
        return response
