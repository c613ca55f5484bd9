"""The request body limit of the API, enforced before anything reads the body.

Django checks ``DATA_UPLOAD_MAX_MEMORY_SIZE`` only when ``request.body`` or form data is read; DRF's
JSON parser reads the stream directly and so never trips it. This middleware refuses an oversize
API request by its declared ``Content-Length`` with the one error format, before a view runs.
Admin uploads (skill archives) are not API requests and keep Django's own file-upload limits.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from config.errors import request_too_large

API_PREFIX = "/api/"


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if request.path.startswith(API_PREFIX) and limit is not None and _declared_length(request) > limit:
            return JsonResponse(request_too_large(limit).as_dict(), status=413)
        return self.get_response(request)
