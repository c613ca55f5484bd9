"""``GET budget``: the calling client's daily limits, today's consumption, what remains, and when the
day's budget resets (agents/runtime/budget.py)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.runtime.budget import BudgetStatus, budget_status
from config.api import named_serializer, operation_schema
from gateway.apis.context import client_of
from gateway.apis.costs import cost_field

TokenBudgetSerializer = named_serializer(
    "TokenBudget",
    {
        "limit": serializers.IntegerField(allow_null=True, help_text="Tokens per UTC day; null: no limit."),
        "used": serializers.IntegerField(help_text="Provider-reported tokens (prompt + completion) today."),
        "reserved": serializers.IntegerField(help_text="Held by sends in flight (their estimates)."),
        "remaining": serializers.IntegerField(allow_null=True, help_text="null: no limit."),
    },
)
CostBudgetSerializer = named_serializer(
    "CostBudget",
    {
        "limit": cost_field("Per UTC day; null: no limit.", allow_null=True),
        "used": cost_field("At the serving models' prices, today."),
        "reserved": cost_field("Held by sends in flight (their estimates)."),
        "remaining": cost_field("null: no limit.", allow_null=True),
    },
)


class BudgetApi(APIView):
    # Any client that may send reads its own budget.
    required_scope = ("configurations:use", "runs:create")

    class OutputSerializer(serializers.Serializer):
        day = serializers.DateField(help_text="The UTC day these figures are for: today.")
        reset_at = serializers.DateTimeField(help_text="When the day's budget resets: the next UTC midnight.")
        tokens = TokenBudgetSerializer()
        cost = CostBudgetSerializer()

        class Meta:
            ref_name = "Budget"

    @operation_schema(
        "budget",
        "This client's daily budget and today's consumption",
        OutputSerializer,
        description="A send that does not fit what remains is refused with 429 budget_exhausted; "
        "nothing is sent.",
    )
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(budget_body(budget_status(client_of(request)))).data)


def budget_body(status: BudgetStatus) -> dict[str, Any]:
    return {
        "day": status.day,
        "reset_at": status.reset_at,
        "tokens": {
            "limit": status.token_limit,
            "used": status.tokens_used,
            "reserved": status.tokens_reserved,
            "remaining": status.tokens_remaining,
        },
        "cost": {
            "limit": status.cost_limit,
            "used": status.cost_used,
            "reserved": status.cost_reserved,
            "remaining": status.cost_remaining,
        },
    }
