"""What every app's API shares: input validation, the error schema and pagination.

Views stay thin: they validate with :func:`validated` and nested serializers and call one service or
selector. A list is a :class:`ListApi` (documented by :func:`list_api`); any other operation is
documented by :func:`operation_schema`. :func:`error_responses` documents the one error
format ``{"code", "message", "extra"}`` for each status a view can answer.
"""

from __future__ import annotations

import dataclasses
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.fields import empty
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
        "or refused (extra.retry_after seconds; also the Retry-After header); or budget_exhausted: "
        "the client's daily token or cost budget (extra.kind, limit, used, reserved, estimate, "
        "reset_at, retry_after; nothing was sent)"
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


def operation_schema(
    tag: str,
    summary: str,
    answer: Any,
    *,
    status: int | tuple[int, str] = 200,
    errors: tuple[int, ...] = (),
    request: Any = empty,
    description: str | None = None,
    parameters: list[Any] | None = None,
    **error_texts: str,
) -> Callable[[Any], Any]:
    """The schema of one operation under ``tag``: ``answer`` at ``status``, and the error format for
    ``errors`` plus 401/403/429 (``error_texts`` as :func:`error_responses` takes them)."""
    return extend_schema(
        tags=[tag],
        summary=summary,
        description=description,
        request=request,
        parameters=parameters,
        responses={status: answer, **error_responses(*errors, **error_texts)},
    )


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


def validated(serializer_class: type[serializers.Serializer], data: Any) -> Any:
    """``data`` (a request body or query parameters) as ``serializer_class`` validates it. Invalid
    input raises DRF's ``ValidationError``: a 400 ``invalid_input`` naming the fields.

    DRF builds a serializer's fields for every instance by deep-copying each declared field: for a
    request shape of twenty fields that cost more than the validation itself (0.4 ms against 0.06 ms
    per chat completion). A serializer used only to validate keeps nothing between calls: its public
    ``run_validation`` returns the validated data, or raises the ``ValidationError`` whose detail
    ``is_valid(raise_exception=True)`` would raise, and sets no attribute of the instance. So each
    thread keeps one instance per serializer class (threads never share one: a field's ``parent`` is
    its serializer) and validates every body with it."""
    kept: dict[type[serializers.Serializer], serializers.Serializer] | None = getattr(
        _KEPT, "serializers", None
    )
    if kept is None:
        kept = _KEPT.serializers = {}
    serializer = kept.get(serializer_class)
    if serializer is None:
        serializer = kept[serializer_class] = serializer_class()
    return serializer.run_validation(data)


_KEPT = threading.local()


def named_serializer(
    name: str,
    fields: dict[str, serializers.Field] | None = None,
    *,
    base: type[serializers.Serializer] = serializers.Serializer,
) -> type[serializers.Serializer]:
    """A serializer class: ``base`` with ``fields`` added, documented as the component ``name``."""
    meta = type("Meta", (), {"ref_name": name})
    return type(f"{name}Serializer", (base,), {**(fields or {}), "Meta": meta})


def figures_serializer(name: str, figures: type) -> type[serializers.Serializer]:
    """A serializer of the integer figures of the dataclass ``figures``, one field each, in order."""
    return named_serializer(name, {f.name: serializers.IntegerField() for f in dataclasses.fields(figures)})


def paginated_serializer(item: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """A serializer class documenting one page of ``item`` (``ref_name`` ``name``)."""
    return named_serializer(
        name,
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
        },
    )


def list_schema(
    *,
    tag: str,
    summary: str,
    item: type[serializers.Serializer],
    page: str,
    filters: type[serializers.Serializer] | None = None,
    operation_id: str | None = None,
) -> Callable[[Any], Any]:
    """The schema of a paginated list: ``filters`` and the page parameters in, a page of ``item``
    (component ``page``) out; 404 for a page past the end, and 400 when there are filters."""
    return extend_schema(
        tags=[tag],
        summary=summary,
        operation_id=operation_id,
        parameters=[filters, *PAGINATION_PARAMETERS] if filters else PAGINATION_PARAMETERS,
        responses={
            200: paginated_serializer(item, page),
            **error_responses(*((400, 404) if filters else (404,))),
        },
    )


def paginated_response(
    *,
    items: Iterable[Any],
    serializer_class: type[serializers.Serializer],
    request: Request,
    view: APIView,
    body: Callable[[Any], Any] | None = None,
) -> Response:
    """One page of ``items``, each passed through ``body`` (when given) and ``serializer_class``."""
    paginator = ApiPagination()
    page = paginator.paginate_queryset(items, request, view=view) or []
    rows = [body(item) for item in page] if body is not None else page
    serializer = serializer_class(rows, many=True, context={"request": request})
    return paginator.get_paginated_response(serializer.data)


# ``GET``: one page of ``rows`` for the filters of the query, each row passed through ``body`` and
# serialized by ``item``. ``FilterSerializer`` validates the query (None: the list takes no filters).
# Document a subclass with list_api. (No docstring: the schema would show it as every list's
# description.)
class ListApi(APIView, ABC):
    item: ClassVar[type[serializers.Serializer]]
    FilterSerializer: ClassVar[type[serializers.Serializer] | None] = None

    @abstractmethod
    def rows(self, request: Request, filters: dict[str, Any]) -> Iterable[Any]:
        """The rows of the list for the validated ``filters``, in order."""

    def body(self, row: Any) -> Any:
        """What ``item`` serializes of ``row`` (the row itself unless a subclass says otherwise)."""
        return row

    def get(self, request: Request) -> Response:
        filters = validated(self.FilterSerializer, request.query_params) if self.FilterSerializer else {}
        return paginated_response(
            items=self.rows(request, filters),
            serializer_class=self.item,
            request=request,
            view=self,
            body=self.body,
        )


ListView = TypeVar("ListView", bound=type[ListApi])


def list_api(
    *, tag: str, summary: str, page: str, operation_id: str | None = None
) -> Callable[[ListView], ListView]:
    """Documents a :class:`ListApi`'s ``GET`` with :func:`list_schema` of its ``item`` and filters."""

    def document(view: ListView) -> ListView:
        schema = list_schema(
            tag=tag,
            summary=summary,
            item=view.item,
            page=page,
            filters=view.FilterSerializer,
            operation_id=operation_id,
        )
        return extend_schema_view(get=schema)(view)

    return document
