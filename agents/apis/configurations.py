"""``GET configurations``: the configurations this client may use."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.request import Request

from agents.models import Configuration
from agents.selectors import configuration_list_for_client, configuration_zone
from config.api import ListApi, list_api


@list_api(
    tag="configurations", summary="List the configurations this client may use", page="ConfigurationPage"
)
class ConfigurationListApi(ListApi):
    required_scope = "configurations:use"

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

        class Meta:
            ref_name = "Configuration"

        def get_zone(self, configuration: Configuration) -> str:
            return configuration_zone(configuration).value

    item = OutputSerializer

    def rows(self, request: Request, filters: dict[str, Any]) -> QuerySet[Configuration]:
        return configuration_list_for_client(api_client=request.user)
