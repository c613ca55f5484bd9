"""``GET configurations``: the configurations this client may use."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.models import Configuration
from agents.selectors import configuration_list_for_client, configuration_zone
from config.api import list_schema, paginated_response


class ConfigurationListApi(APIView):
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

    @list_schema(
        tag="configurations",
        summary="List the configurations this client may use",
        item=OutputSerializer,
        page="ConfigurationPage",
    )
    def get(self, request: Request) -> Response:
        items = configuration_list_for_client(api_client=request.user)
        return paginated_response(
            items=items, serializer_class=self.OutputSerializer, request=request, view=self
        )
