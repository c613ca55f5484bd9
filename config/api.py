"""What every app's API shares: the error schema and pagination.

Views stay thin: they validate with nested serializers, call one service or
selector, and use :func:`paginated_response` for lists. :func:`error_responses` documents the one
error format ``{"code", "message", "extra"}`` for each status a view can answer.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

MAX_PAGE_SIZE = 100
# The largest primary key a lookup accepts: anything larger cannot exist and would overflow a query.
MAX_ID = 2**63 - 1


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="A stable code, e.g. invalid_input, not_found, context_refused.")
    message = serializers.CharField()
    extra = serializers.DictField(help_text="Details by code; never secret content.")


_ERROR_CODES = {
    400: (
        "invalid_input (extra.fields, extra.codes; extra.max_depth when the JSON body nests too deep), "
        "parse_error, or a business-rule code"
    ),
    401: "not_authenticated (no token) or authentication_failed (unknown or inactive token)",
    403: "permission_denied (extra.required_scope names the missing scope)",
    404: "not_found: unknown, or not visible to this client",
    409: "a state conflict",
    413: "request_too_large (extra.limit_bytes)",
    422: "context_overflow (extra.breakdown)",
    429: (
        "throttled: over the client's rate, or its address's rate for requests without a valid token "
        "or refused (extra.retry_after seconds; also the Retry-After header)"
    ),
    502: "provider_error (extra.failure_class; never secrets)",
}
COMMON_ERRORS = (401, 403, 429)


def error_responses(*statuses: int, **descriptions: str) -> dict[int, OpenApiResponse]:
    """OpenAPI responses for ``statuses`` plus 401/403/429, which every API view can answer.
    ``descriptions`` override the default text by ``s<status>`` (e.g. ``s409="run_finished"``)."""
    wanted = sorted(set(statuses) | set(COMMON_ERRORS))
    return {
        status: OpenApiResponse(
            ErrorSerializer, description=descriptions.get(f"s{status}", _ERROR_CODES[status])
        )
        for status in wanted
    }


class ApiPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


PAGINATION_PARAMETERS = [
    OpenApiParameter("page", OpenApiTypes.INT, description="1-based page number."),
    OpenApiParameter(
        "page_size", OpenApiTypes.INT, description=f"Items per page (capped at {MAX_PAGE_SIZE})."
    ),
]


def paginated_serializer(item: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """A serializer class documenting one page of ``item`` (``ref_name`` ``name``)."""
    meta = type("Meta", (), {"ref_name": name})
    fields: dict[str, Any] = {
        "count": serializers.IntegerField(),
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": item(many=True),
        "Meta": meta,
    }
    return type(f"{name}Serializer", (serializers.Serializer,), fields)


def paginated_response(
    *,
    items: QuerySet[Any],
    serializer_class: type[serializers.Serializer],
    request: Request,
    view: APIView,
) -> Response:
    paginator = ApiPagination()
    page = paginator.paginate_queryset(items, request, view=view)
    serializer = serializer_class(page, many=True, context={"request": request})
    return paginator.get_paginated_response(serializer.data)
