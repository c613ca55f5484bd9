"""``GET configurations``: the configurations this client may use; ``POST configurations/{identifier}/
declassification``: declare a configuration's answers deliverable down to a zone (privileged, recorded)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.errors import NotVisible
from catalog.models import Configuration, ContextStrategy
from catalog.selectors import configuration_get_for_client, configuration_list_for_client, configuration_zone
from catalog.services import answers_declassify
from config.api import ListApi, list_api, operation_schema, validated
from governance.actors import CLASSIFY_SCOPE
from governance.vocabulary import TrustZone

USE_SCOPE = "configurations:use"


@list_api(
    tag="configurations", summary="List the configurations this client may use", page="ConfigurationPage"
)
class ConfigurationListApi(ListApi):
    required_scope = USE_SCOPE

    class OutputSerializer(serializers.Serializer):
        identifier = serializers.CharField()
        name = serializers.CharField()
        model = serializers.CharField(source="model.model_id")
        provider = serializers.CharField(source="model.provider.identifier")
        context_window = serializers.IntegerField(source="model.context_window")
        max_output_tokens = serializers.IntegerField(source="model.max_output_tokens")
        zone = serializers.SerializerMethodField(
            help_text="The least trusted zone of the model and fallbacks."
        )
        skill_mode = serializers.CharField()
        tags = serializers.ListField(child=serializers.CharField(), source="snippet_tags")
        is_active = serializers.BooleanField()
        answers_deliverable_to = serializers.CharField(
            allow_blank=True,
            help_text="A recorded declassification: answers may be delivered down to this zone. Blank: an "
            "answer keeps the class of what it came from.",
        )
        trusted_model = serializers.CharField(
            source="trusted_model.model_id",
            allow_null=True,
            default=None,
            help_text="Serves the sends whose sources exceed the model's zone; null: they are refused.",
        )
        context_strategy = serializers.ChoiceField(
            choices=ContextStrategy.choices, help_text="What a run does when its context fills."
        )
        compaction_threshold = serializers.FloatField(
            help_text="Compact when the last step's prompt passes this share of its model's window."
        )
        compaction_keep = serializers.IntegerField(
            help_text="The most recent tool results (clear) or turns (summarise) kept as they are."
        )
        summary_model = serializers.CharField(
            source="summary_model.model_id",
            allow_null=True,
            default=None,
            help_text="Writes the summaries; null: the configuration's model.",
        )

        class Meta:
            ref_name = "Configuration"

        def get_zone(self, configuration: Configuration) -> str:
            return configuration_zone(configuration).value

    item = OutputSerializer

    def rows(self, request: Request, filters: dict[str, Any]) -> QuerySet[Configuration]:
        return configuration_list_for_client(api_client=request.user)


class DeclassificationApi(APIView):
    # Loosening needs the classify scope (checked by the service, which records every change);
    # clearing or tightening is open to any client the configuration is granted to.
    required_scope = (CLASSIFY_SCOPE, USE_SCOPE)

    class InputSerializer(serializers.Serializer):
        answers_deliverable_to = serializers.ChoiceField(
            choices=TrustZone.choices, allow_null=True, help_text="Null clears the declassification."
        )

        class Meta:
            ref_name = "DeclassificationInput"

    class OutputSerializer(serializers.Serializer):
        configuration = serializers.CharField()
        answers_deliverable_to = serializers.CharField(allow_null=True)
        event = serializers.IntegerField(
            allow_null=True, help_text="The reclassified governance event; null when nothing changed."
        )

        class Meta:
            ref_name = "Declassification"

    @operation_schema(
        "configurations",
        "Declare a configuration's answers deliverable down to a zone",
        OutputSerializer,
        request=InputSerializer,
        errors=(400, 404),
        description="Lowers every answer's label, up to system_diagnostics (secret_adjacent is never "
        "lowered), to the zone's most sensitive class; recorded as a reclassified governance event "
        "naming this client. Only a configuration granted to this client: any other answers 404 as "
        "an unknown one. Setting or loosening needs the governance:classify scope (else 403 "
        "reclassify_forbidden); clearing or tightening needs configurations:use.",
    )
    def post(self, request: Request, identifier: str) -> Response:
        data = validated(self.InputSerializer, request.data)
        configuration = configuration_get_for_client(api_client=request.user, identifier=identifier)
        if configuration is None:
            raise NotVisible(
                f"There is no configuration {identifier!r}.", extra={"configuration": identifier}
            )
        raw = data["answers_deliverable_to"]
        zone = TrustZone(raw) if raw else None
        event = answers_declassify(configuration=configuration, zone=zone, actor=request.user.as_actor())
        body = {
            "configuration": identifier,
            "answers_deliverable_to": raw,
            "event": event.pk if event else None,
        }
        return Response(self.OutputSerializer(body).data)
