"""The governance API: the event log (filtered, paginated; never content) and the readiness report.

Both need ``governance:read`` and are scoped to the client. Events: those of the client's own requests,
and those of no client's request (a management command, an admin preview) on a configuration the
client may use; another client's request is never shown, even on a shared configuration. Readiness:
rows of the client's configurations only. So no other client's name or configuration appears. Both
views live in the agents app because the scope depends on the client; the governance app knows no
clients.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.models import ApiClient
from catalog.readiness import readiness_report
from catalog.selectors import configuration_list_for_client
from config.api import ListApi, list_api, named_serializer, operation_schema
from governance.models import GovernanceEvent
from governance.selectors import EventReader, governance_event_list
from governance.vocabulary import Decision, EventOutcome, SourceKind

TAG = "governance"
# An event's text columns, each empty where it does not apply (no source, no provider, no run).
_EVENT_TEXTS = (
    "source_kind", "source_identifier", "data_class", "ceiling", "zone", "reason",
    "provider", "model", "configuration", "api_client", "run",
)  # fmt: skip


def _reader(client: ApiClient) -> EventReader:
    identifiers = configuration_list_for_client(api_client=client).values_list("identifier", flat=True)
    return EventReader(api_client=client.name, configurations=frozenset(identifiers))


@list_api(
    tag=TAG,
    summary="List the governance events of this client's requests and configurations, newest first",
    page="GovernanceEventPage",
)
class GovernanceEventListApi(ListApi):
    required_scope = "governance:read"

    class FilterSerializer(serializers.Serializer):
        decision = serializers.ChoiceField(choices=Decision.choices, required=False)
        outcome = serializers.ChoiceField(choices=EventOutcome.choices, required=False)
        configuration = serializers.CharField(max_length=100, required=False)
        source_kind = serializers.ChoiceField(choices=SourceKind.choices, required=False)
        run = serializers.CharField(max_length=64, required=False)

        class Meta:
            ref_name = "GovernanceEventFilter"

    item = named_serializer(
        "GovernanceEvent",
        {
            "id": serializers.IntegerField(),
            "created_at": serializers.DateTimeField(),
            "correlation_id": serializers.CharField(help_text="The run id, or a completion's request id."),
            "decision": serializers.ChoiceField(choices=Decision.choices),
            "outcome": serializers.ChoiceField(choices=EventOutcome.choices),
            **{name: serializers.CharField(allow_blank=True) for name in _EVENT_TEXTS},
            "step": serializers.IntegerField(allow_null=True),
        },
    )

    def rows(self, request: Request, filters: dict[str, Any]) -> QuerySet[GovernanceEvent]:
        return governance_event_list(reader=_reader(request.user), **filters)


class ReadinessApi(APIView):
    required_scope = "governance:read"

    class OutputSerializer(serializers.Serializer):
        class RowSerializer(serializers.Serializer):
            kind = serializers.CharField()
            identifier = serializers.CharField()
            data_class = serializers.CharField(allow_blank=True)
            ceiling = serializers.CharField(allow_blank=True)
            configuration = serializers.CharField()
            zone = serializers.CharField()
            would_be = serializers.CharField(help_text="allowed or refused, under enforcement")
            reason = serializers.CharField(allow_blank=True)

            class Meta:
                ref_name = "ReadinessRow"

        rows = RowSerializer(many=True)
        summary = named_serializer(
            "ReadinessSummary",
            {
                "observe_rows": serializers.IntegerField(),
                "would_refuse": serializers.IntegerField(),
                "personal_data_findings": serializers.IntegerField(),
            },
        )()
        declassified_answers = named_serializer(
            "DeclassifiedAnswers",
            {"configuration": serializers.CharField(), "zone": serializers.CharField()},
        )(many=True, help_text="Configurations whose answers are declared deliverable down to a zone.")
        personal_data = named_serializer(
            "ReadinessPersonalData",
            {
                "kind": serializers.CharField(),
                "identifier": serializers.CharField(),
                "data_class": serializers.CharField(allow_blank=True),
                "configuration": serializers.CharField(),
                "zone": serializers.CharField(),
                "found": serializers.DictField(child=serializers.IntegerField()),
                "would_be": serializers.CharField(),
            },
        )(
            many=True,
            help_text="Sources whose text holds personal data (kinds and counts), as a send decides them.",
        )

        class Meta:
            ref_name = "Readiness"

    @operation_schema(
        TAG,
        "Which observed rows of this client's configurations would be refused under enforcement",
        OutputSerializer,
    )
    def get(self, request: Request) -> Response:
        report = readiness_report(configurations=configuration_list_for_client(api_client=request.user))
        return Response(self.OutputSerializer(report.as_dict()).data)
