"""``POST context/preview`` (what would be sent; records nothing) and ``POST completions`` (one
governed call). Both take the same body and go through the same plan, decision and fit."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponseBase
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.runtime.preview import context_preview
from config.api import named_serializer, operation_schema, validated
from gateway.apis.context import (
    BreakdownSerializer,
    ContextRequestSerializer,
    DecisionSerializer,
    PreviewMessageSerializer,
    ReceiptSerializer,
    ToolCallSerializer,
    client_configuration,
    client_of,
    send_request,
)
from gateway.apis.costs import cost_field
from gateway.apis.serving import GovernedCallApi, Served
from gateway.services import Completion, CompletionCall
from governance.vocabulary import Provenance

TAG = "completions"
MAX_TOKENS_400 = (
    "invalid_input (extra.fields), or max_tokens_too_large: above the output limit of every active "
    "model of the configuration (extra.limit: the largest; extra.model: its model). Nothing was sent."
)


def _reason_serializer(name: str, subject: str) -> type[serializers.Serializer]:
    return named_serializer(name, {subject: serializers.CharField(), "reason": serializers.CharField()})


class ContextPreviewApi(APIView):
    required_scope = "configurations:use"

    InputSerializer = named_serializer("ContextPreviewInput", base=ContextRequestSerializer)

    class OutputSerializer(serializers.Serializer):
        configuration = serializers.CharField()
        model = serializers.CharField()
        provider = serializers.CharField()
        zone = serializers.CharField()
        routed_from = serializers.CharField(
            allow_null=True, help_text="The send goes to the trusted model: its sources exceed this zone."
        )
        answers_deliverable_to = serializers.CharField(
            allow_null=True, help_text="The configuration's recorded declassification of its answers."
        )
        would_send = serializers.BooleanField()
        overflow = serializers.BooleanField()
        messages = PreviewMessageSerializer(
            many=True,
            help_text="The messages part by part, redacted; parts the client may not see are withheld.",
        )
        tools = serializers.ListField(child=serializers.DictField())
        decision = DecisionSerializer()
        breakdown = BreakdownSerializer()
        unknown_tags = serializers.ListField(child=serializers.CharField())
        empty_tags = serializers.ListField(child=serializers.CharField())
        dropped_skills = _reason_serializer("DroppedSkill", "skill")(many=True)
        denied_tools = _reason_serializer("DeniedTool", "tool")(many=True)
        redactions = serializers.DictField(child=serializers.IntegerField())

        class Meta:
            ref_name = "ContextPreview"

    @operation_schema(
        TAG,
        "Preview the governed context",
        OutputSerializer,
        description="Assemble, decide and fit exactly as a send would. Records no event, sends nothing.",
        request=InputSerializer,
        errors=(400, 404, 409, 413),
        s400=MAX_TOKENS_400,
        s409="configuration_inactive or model_inactive",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        configuration = client_configuration(request, data["configuration"])
        preview = context_preview(
            configuration=configuration,
            request=send_request(request, data, configuration),
            max_tokens=data.get("max_tokens"),
        )
        body = preview.as_dict(receiver_zone=client_of(request).zone)
        return Response(self.OutputSerializer(body).data)


class CompletionApi(GovernedCallApi):
    required_scope = "configurations:use"

    InputSerializer = named_serializer("CompletionInput", base=ContextRequestSerializer)

    class OutputSerializer(serializers.Serializer):
        class UsageSerializer(serializers.Serializer):
            prompt_tokens = serializers.IntegerField(allow_null=True)
            cached_tokens = serializers.IntegerField(allow_null=True)
            cache_write_tokens = serializers.IntegerField(allow_null=True)
            completion_tokens = serializers.IntegerField(allow_null=True)
            provenance = serializers.ChoiceField(choices=Provenance.choices)
            cost = cost_field(
                "At the serving model's prices; null when the provider reported no usage.",
                allow_null=True,
            )

            class Meta:
                ref_name = "CompletionUsage"

        request_id = serializers.CharField(help_text="The correlation id of this call's governance events.")
        text = serializers.CharField(allow_blank=True)
        tool_calls = ToolCallSerializer(many=True)
        finish_reason = serializers.CharField()
        usage = UsageSerializer()
        model = serializers.CharField(help_text="The model that served the call.")
        breakdown = BreakdownSerializer()
        governance_receipt = ReceiptSerializer()

        class Meta:
            ref_name = "Completion"

    @operation_schema(
        TAG,
        "Run one governed completion",
        OutputSerializer,
        request=InputSerializer,
        errors=(400, 404, 409, 413, 422, 502),
        s400=MAX_TOKENS_400,
        s403="context_refused (extra.decision: every source with its outcome; nothing was sent) "
        "or permission_denied (extra.required_scope)",
        s409="configuration_inactive, or model_inactive (every target or its provider is "
        "switched off; extra.inactive; nothing was sent)",
    )
    def post(self, request: Request) -> HttpResponseBase:
        data = validated(self.InputSerializer, request.data)
        configuration = client_configuration(request, data["configuration"])
        completion = CompletionCall(
            configuration=configuration,
            api_client=request.user,
            request=send_request(request, data, configuration),
            max_tokens=data.get("max_tokens"),
        )
        return self.answer(Served(completion, self._body))

    def _body(self, completion: Completion) -> dict[str, Any]:
        return dict(self.OutputSerializer(completion_body(completion)).data)


def completion_body(completion: Completion) -> dict[str, Any]:
    """Usage as the provider reported it; when it reported nothing, our estimate of the prompt."""
    reply, usage = completion.reply, completion.reply.usage
    figures: dict[str, Any]
    if usage.provenance == Provenance.PROVIDER_REPORTED:
        figures = {
            "prompt_tokens": usage.prompt_tokens,
            "cached_tokens": usage.cached_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "completion_tokens": usage.completion_tokens,
            "provenance": usage.provenance,
            "cost": completion.cost,
        }
    else:
        figures = {
            "prompt_tokens": completion.breakdown.estimated,
            "cached_tokens": None,
            "cache_write_tokens": None,
            "completion_tokens": None,
            "provenance": Provenance.ESTIMATED,
            "cost": None,
        }
    return {
        "request_id": completion.request_id,
        "text": reply.text,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
        "finish_reason": reply.finish_reason,
        "usage": figures,
        "model": completion.served.model_id,
        "breakdown": completion.breakdown.as_dict(),
        "governance_receipt": completion.receipt,
    }
