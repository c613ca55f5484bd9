"""``GET runs/{id}/events``: Server-Sent Events of a run's steps as they happen, then the run.

While a step runs, ``delta`` events carry the model's text as it arrives (``{"step", "text"}``,
redacted as it streams: ``governance/guardrails/redaction/streaming.py``), and ``tool_call`` events
each call the model asked for (``{"step", "id", "name", "arguments"}``, redacted); they carry no id
(``agents/runtime/live.py``). One ``step`` event per recorded step (``id`` = the step index, ``data``
= the step as in the run detail), then one ``run`` event when the run has finished: the run summary
and its ``answer`` (the final assistant turn as stored, redacted; null unless completed), the same
text the run detail shows. An ``approval`` event is sent for a tool call that waits for a person's
approval, and again when it is decided (data = the approval as in the run detail, its arguments
withheld from a reader who may not read the turn that asked for it). Nothing else of the transcript is sent: tool results never are, the
summary's error message is stored redacted and names sources by identifier and position only.
``Last-Event-ID`` resumes after that step (live events of later steps still buffered are sent again). The stream polls the database every :data:`POLL_SECONDS` and ends after
``?timeout=`` seconds (default 30, at most 120) with a ``timeout`` event, so a client reconnects
with ``Last-Event-ID`` instead of holding a worker forever.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request

from agents.models import AgentRun, AgentStep, RunMessage
from agents.runtime.live import LiveEvent, LiveReader, live_channel
from config.api import operation_schema
from config.json_renderer import OrjsonRenderer
from config.request_headers import header
from config.request_thread import release_connections
from gateway.apis.approval_output import ToolApprovalSerializer, approval_bodies
from gateway.apis.context import client_of
from gateway.apis.run_output import (
    RunSummarySerializer,
    StepSerializer,
    readable_messages,
    run_summary_body,
    step_body,
)
from gateway.apis.runs import client_run
from gateway.apis.sse import (
    EventStreamApi,
    sse_comment,
    sse_event,
    sse_response,
    sse_retry,
)
from governance.vocabulary import TrustZone

POLL_SECONDS = 0.5
KEEPALIVE_SECONDS = 15.0
DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 120


class JsonErrorsNegotiation(BaseContentNegotiation):
    """The stream bypasses renderers; whatever the client accepts (an EventSource sends
    ``Accept: text/event-stream``), an error before the stream starts is the one JSON error format,
    and a whole answer JSON, both written by the API's renderer (``config/json_renderer.py``)."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: str | None = None) -> Any:
        renderer = OrjsonRenderer()
        return renderer, renderer.media_type


def _last_event_id(request: Request) -> int:
    raw = (header(request, "Last-Event-ID") or "").strip()
    return int(raw) if raw.isdigit() and len(raw) < 10 else -1


def run_event_stream(
    run: AgentRun, *, after: int, timeout: float, receiver_zone: TrustZone = TrustZone.EXTERNAL_GLOBAL
) -> Iterator[bytes]:
    """Steps with an index above ``after`` as they land, the live events of the steps not yet
    recorded as they happen, then the run with its answer when it is terminal; as a reader in
    ``receiver_zone`` may see them. Every step was gated for the run's receiver zone, so its live
    events are sent only to a reader no less trusted than that; the answer only when its label for
    the run's receiver is within the reader's zone.

    The run's status is read **before** its steps on every poll: a run seen terminal has stored all
    its steps, so the final poll cannot miss one that landed in between. A step's live events come
    before its ``step`` event (they are published while it runs). The database connection is
    released after every poll, so a stream waiting for the next event holds none.
    """
    deadline = time.monotonic() + timeout
    last_write = time.monotonic()
    serving = run.configuration.model
    live: LiveReader = live_channel()
    if receiver_zone.rank > TrustZone.parse(run.receiver_zone).rank:
        live = _NO_LIVE_EVENTS
    seen: str | None = None
    announced: dict[str, str] = {}  # approval id: the decision last sent
    yield sse_retry(2000)
    while True:
        current = AgentRun.objects.select_related("configuration").get(pk=run.pk)
        steps = AgentStep.objects.filter(run_id=run.pk, index__gt=after).select_related("model")
        bodies = [
            (step.index, StepSerializer(step_body(step, serving, receiver_zone)).data)
            for step in steps.order_by("index")
        ]
        final = _final_event(current, receiver_zone) if current.is_terminal else None
        approvals = _approval_events(current, receiver_zone, announced)
        release_connections()
        pending, seen = _live_events(live, run, seen, after, 0)
        for index, body in bodies:
            yield from (event for step, event in pending if step <= index)
            pending = [(step, event) for step, event in pending if step > index]
            yield sse_event(body, event="step", event_id=index)
            after, last_write = index, time.monotonic()
        yield from (event for _, event in pending)
        yield from approvals
        if final is not None:
            yield final
            return
        if time.monotonic() >= deadline:
            yield sse_event(
                {"run": str(run.pk), "status": current.status, "last_event_id": after}, event="timeout"
            )
            return
        if time.monotonic() - last_write >= KEEPALIVE_SECONDS:
            yield sse_comment("keep-alive")
            last_write = time.monotonic()
        poll_end = min(time.monotonic() + POLL_SECONDS, deadline)
        while (remaining := poll_end - time.monotonic()) > 0:
            pending, seen = _live_events(live, run, seen, after, remaining)
            if pending:
                last_write = time.monotonic()
            yield from (event for _, event in pending)


def _live_events(
    live: LiveReader, run: AgentRun, seen: str | None, after: int, timeout: float
) -> tuple[list[tuple[int, bytes]], str | None]:
    """The live events of steps above ``after`` published since ``seen``, each with its step and
    encoded, and the new ``seen``. Waits up to ``timeout`` seconds for one."""
    fresh = live.read(str(run.pk), seen, timeout)
    steps = [(int(event.data.get("step", -1)), event) for event in fresh]
    events = [(step, sse_event(event.data, event=event.name)) for step, event in steps if step > after]
    return events, fresh[-1].position if fresh else seen


def _approval_events(run: AgentRun, receiver_zone: TrustZone, announced: dict[str, str]) -> list[bytes]:
    """An ``approval`` event for each of the run's approvals that is new or decided since it was last
    sent (``announced`` is updated), as a reader in ``receiver_zone`` may see it."""
    events: list[bytes] = []
    for body in approval_bodies(run, receiver_zone):
        key = str(body["id"])
        if announced.get(key) != body["decision"]:
            announced[key] = body["decision"]
            events.append(sse_event(dict(ToolApprovalSerializer(body).data), event="approval"))
    return events


def _final_event(run: AgentRun, receiver_zone: TrustZone) -> bytes:
    """The ``run`` event: the run summary and its ``answer``, the text of the final assistant turn
    as stored (redacted), or null when the run ended without one or the reader may not read it
    (``answer_withheld`` then says so)."""
    summary = dict(RunSummarySerializer(run_summary_body(run)).data)
    last = (
        RunMessage.objects.filter(run=run, role="assistant").order_by("-step_index").first()
        if run.status == "completed"
        else None
    )
    shown = last is not None and readable_messages([last], receiver_zone)[last.pk]
    answer = last.content if shown and last is not None else None
    withheld = last is not None and not shown
    return sse_event({**summary, "answer": answer, "answer_withheld": withheld}, event="run")


class _NoLiveEvents:
    """The live channel of a reader who may not see a step's text as it streams: none."""

    def read(self, run_id: str, after: str | None, timeout: float) -> list[LiveEvent]:
        time.sleep(max(0.0, timeout))
        return []


_NO_LIVE_EVENTS = _NoLiveEvents()


class RunEventsApi(EventStreamApi):
    required_scope = "runs:read"
    content_negotiation_class = JsonErrorsNegotiation

    class FilterSerializer(serializers.Serializer):
        timeout = serializers.IntegerField(min_value=0, max_value=MAX_TIMEOUT, default=DEFAULT_TIMEOUT)

        class Meta:
            ref_name = "RunEventsFilter"

    @operation_schema(
        "runs",
        "Stream a run's steps as Server-Sent Events",
        OpenApiResponse(OpenApiTypes.STR, description="text/event-stream of step, run and timeout events."),
        status=(200, "text/event-stream"),
        description=(
            "Events: `delta` (the model's text as it arrives: step, text; redacted), `tool_call` (step, "
            "id, name, arguments; redacted), `step` (id = step index, data = a Step), `approval` (a tool "
            "call waiting for approval, or its decision: a ToolApproval, arguments withheld above the "
            "client's zone), `run` (data = the "
            "run summary and its `answer`; last), `timeout` (the stream's time is up; reconnect with "
            "Last-Event-ID). Resume with the `Last-Event-ID` header."
        ),
        parameters=[
            FilterSerializer,
            OpenApiParameter("Last-Event-ID", OpenApiTypes.INT, OpenApiParameter.HEADER, required=False),
        ],
        errors=(400, 404),
    )
    def get(self, request: Request, run_id: str) -> StreamingHttpResponse:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        run = client_run(request, run_id)
        stream = run_event_stream(
            run,
            after=_last_event_id(request),
            timeout=filters.validated_data["timeout"],
            receiver_zone=client_of(request).zone,
        )
        return sse_response(stream, asgi=self.asgi)
