"""Runs: create (202, queued), list the client's own, detail with steps and context usage, cancel.

A client only ever sees its own runs: another client's run id answers 404, as an unknown id does.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.errors import RunFinished
from agents.models import AgentRun
from agents.selectors import run_get_for_client, run_list_for_client
from agents.services import run_cancel, run_create
from catalog.errors import NotVisible
from config.api import ListApi, list_api, named_serializer, operation_schema, validated
from gateway.apis.completions import MAX_TOKENS_400
from gateway.apis.context import ContextRequestSerializer, caller_context, client_configuration, client_of
from gateway.apis.run_output import (
    RunDetailSerializer,
    RunSummarySerializer,
    run_detail_body,
    run_summary_body,
)

TAG = "runs"


def client_run(request: Request, run_id: str) -> AgentRun:
    run = run_get_for_client(api_client=request.user, run_id=run_id)
    if run is None:
        raise NotVisible(f"There is no run {run_id!r}.", extra={"run": run_id})
    return run


@list_api(tag=TAG, summary="List this client's runs, newest first", operation_id="runs_list", page="RunPage")
class RunCollectionApi(ListApi):
    """``POST runs`` (scope runs:create) and ``GET runs`` (scope runs:read) share one path."""

    required_scope = {"GET": "runs:read", "POST": "runs:create"}

    CreateInputSerializer = named_serializer("RunCreateInput", base=ContextRequestSerializer)

    @operation_schema(
        TAG,
        "Start an agent run",
        OpenApiResponse(RunDetailSerializer, description="Queued; Location names the run."),
        status=202,
        description="Queues the run and answers at once; follow `Location` or `GET runs/{id}/events`.",
        request=CreateInputSerializer,
        errors=(400, 404, 409, 413),
        s400=MAX_TOKENS_400,
        s409="configuration_inactive",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.CreateInputSerializer, request.data)
        run = run_create(
            configuration=client_configuration(request, data["configuration"]),
            input_text=data.get("input", ""),
            input_data_class=data.get("input_data_class"),
            api_client=request.user,
            caller_context=caller_context(data),
            request_skills=data.get("skills", []),
            max_tokens=data.get("max_tokens"),
            messages=data.get("messages"),
        )
        body = run_detail_body(client_run(request, str(run.id)), receiver_zone=client_of(request).zone)
        location = reverse("run-detail", kwargs={"run_id": str(run.id)})
        return Response(
            RunDetailSerializer(body).data, status=status.HTTP_202_ACCEPTED, headers={"Location": location}
        )

    item = RunSummarySerializer

    def rows(self, request: Request, filters: dict[str, Any]) -> QuerySet[AgentRun]:
        return run_list_for_client(api_client=request.user)

    def body(self, row: AgentRun) -> dict[str, Any]:
        return run_summary_body(row)


class RunDetailApi(APIView):
    required_scope = "runs:read"

    @operation_schema(
        TAG, "A run with its steps, context usage and transcript", RunDetailSerializer, errors=(404,)
    )
    def get(self, request: Request, run_id: str) -> Response:
        body = run_detail_body(client_run(request, run_id), receiver_zone=client_of(request).zone)
        return Response(RunDetailSerializer(body).data)


class RunCancelApi(APIView):
    required_scope = "runs:create"

    @operation_schema(
        TAG,
        "Cancel a run",
        RunDetailSerializer,
        description="A queued run stops at once; a running one at its next step boundary.",
        request=None,
        errors=(404, 409),
        s409="run_finished: the run is already completed, failed or cancelled",
    )
    def post(self, request: Request, run_id: str) -> Response:
        run = client_run(request, run_id)
        if run.is_terminal:
            raise RunFinished(f"Run {run.id} is already {run.status}.", extra={"status": run.status})
        run_cancel(run=run)
        body = run_detail_body(client_run(request, run_id), receiver_zone=client_of(request).zone)
        return Response(RunDetailSerializer(body).data)
