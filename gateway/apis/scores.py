"""``POST scores``: a client scores an answer it received, by the id it was given with the answer."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import operation_schema, validated
from gateway.apis.context import client_of
from gateway.models import Score, ScoreKind
from gateway.models.scores import CATEGORY_MAX, COMMENT_MAX, NAME_MAX
from gateway.services.scores import ScoreValue, score_create

TAG = "scores"


class ScoreInputSerializer(serializers.Serializer):
    request_id = serializers.CharField(
        required=False, max_length=64, help_text="A completion's request_id (given beside its receipt)."
    )
    run_id = serializers.CharField(required=False, max_length=64, help_text="A run's id.")
    name = serializers.SlugField(
        required=False, default="overall", max_length=NAME_MAX, help_text="What is scored."
    )
    kind = serializers.ChoiceField(choices=ScoreKind.choices)
    value = serializers.JSONField(help_text="A number (numeric), true/false (boolean) or a text (category).")
    comment = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=COMMENT_MAX, help_text="Stored redacted."
    )

    class Meta:
        ref_name = "ScoreInput"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("request_id")) == bool(attrs.get("run_id")):
            raise serializers.ValidationError({"request_id": "Give exactly one of request_id and run_id."})
        kind, value = attrs["kind"], attrs["value"]
        valid = {
            ScoreKind.NUMERIC: isinstance(value, int | float) and not isinstance(value, bool),
            ScoreKind.BOOLEAN: isinstance(value, bool),
            ScoreKind.CATEGORY: isinstance(value, str) and 0 < len(value.strip()) <= CATEGORY_MAX,
        }[kind]
        if not valid:
            raise serializers.ValidationError({"value": f"Not a value of kind {kind}."})
        return attrs


class ScoreOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    request_id = serializers.CharField(allow_null=True)
    run_id = serializers.CharField(allow_null=True)
    configuration = serializers.CharField()
    label = serializers.CharField(help_text="The answer's label as it was delivered to this client.")
    name = serializers.CharField()
    kind = serializers.CharField()
    value = serializers.JSONField()
    comment = serializers.CharField(allow_blank=True, help_text="As stored: redacted.")
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "Score"


class ScoreApi(APIView):
    required_scope = "scores:write"

    @operation_schema(
        TAG,
        "Score an answer this client received",
        ScoreOutputSerializer,
        status=201,
        request=ScoreInputSerializer,
        errors=(400, 404, 409),
        s404="not_found: the id is unknown or names another client's answer (both alike; nothing stored)",
        s409="nothing_to_score: the run has delivered no answer yet",
    )
    def post(self, request: Request) -> Response:
        data = validated(ScoreInputSerializer, request.data)
        kind = data["kind"]
        value = ScoreValue(
            kind=kind,
            numeric=float(data["value"]) if kind == ScoreKind.NUMERIC else None,
            boolean=data["value"] if kind == ScoreKind.BOOLEAN else None,
            category=data["value"].strip() if kind == ScoreKind.CATEGORY else "",
            name=data["name"],
            comment=data["comment"],
        )
        score = score_create(
            api_client=client_of(request),
            value=value,
            request_id=data.get("request_id", ""),
            run_id=data.get("run_id", ""),
        )
        return Response(ScoreOutputSerializer(score_body(score)).data, status=201)


def score_body(score: Score) -> dict[str, Any]:
    values = {
        ScoreKind.NUMERIC: score.numeric_value,
        ScoreKind.BOOLEAN: score.boolean_value,
        ScoreKind.CATEGORY: score.category_value,
    }
    return {
        "id": score.pk,
        "request_id": score.completion.request_id if score.completion else None,
        "run_id": str(score.run_id) if score.run_id else None,
        "configuration": score.configuration.identifier,
        "label": score.label,
        "name": score.name,
        "kind": score.kind,
        "value": values[ScoreKind(score.kind)],
        "comment": score.comment,
        "created_at": score.created_at,
    }
