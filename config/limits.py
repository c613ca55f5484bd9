"""The limits of API input, enforced before a view sees it: the body's size and its JSON nesting.

Django checks ``DATA_UPLOAD_MAX_MEMORY_SIZE`` only when ``request.body`` or form data is read; DRF's
JSON parser reads the stream directly and so never trips it. :class:`RequestSizeLimitMiddleware`
refuses an oversize API request by its declared ``Content-Length`` with the one error format, before
a view runs. Admin uploads (skill archives) are not API requests and keep Django's own file-upload
limits.

:class:`BoundedJSONParser` (the API's only parser) refuses a body nested deeper than
:data:`MAX_JSON_DEPTH` with ``400 invalid_input``. Python's ``json`` module recurses once per level,
so a deep enough body would otherwise end in a ``RecursionError``; the depth is measured first, without
recursion, in one pass over the body. It also refuses, with ``400 invalid_text`` naming the field, a
string (a value or a key) holding NUL or an unpaired surrogate, which JSON's ``\\u`` escapes can
write: a provider's client cannot encode such text and PostgreSQL cannot store NUL, so letting it
through would end as a provider failure or a 500 instead of the caller's error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import IO, Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from config.errors import API_PREFIX, input_too_deep, invalid_text, request_too_large

# Arrays and objects inside one another, counted from the outermost. No request of this API needs more
# than a handful of levels (a tool's JSON schema perhaps ten); 64 leaves room and stays far below the
# interpreter's recursion limit.
MAX_JSON_DEPTH = 64

_OPEN = ord("[")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_SAME_BRACKETS = bytes.maketrans(b"{}", b"[]")


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


def json_depth_exceeds(text: str, limit: int) -> bool:
    """Whether arrays and objects in ``text`` nest deeper than ``limit``, ignoring brackets inside strings.

    Linear and without recursion: escapes are dropped (each backslash escapes the next character, so
    removing ``\\\\`` and then ``\\"`` pairs them as a JSON reader does), the parts between quotes are
    dropped, and only the remaining brackets are counted, stopping at the first level past ``limit``.
    Malformed JSON gets some answer here and its parse error from the parser afterwards."""
    raw = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    outside_strings = b"".join(raw.split(b'"')[::2])
    brackets = outside_strings.translate(_SAME_BRACKETS, _NOT_BRACKETS)
    depth = 0
    for bracket in brackets:
        if bracket == _OPEN:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing a body nested deeper than :data:`MAX_JSON_DEPTH` before decoding it."""

    def parse(
        self, stream: IO[bytes], media_type: Any = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = get_encoding(parser_context or {})  # text encodings only: never a decompressing codec
        try:
            text = stream.read().decode(encoding)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if json_depth_exceeds(text, MAX_JSON_DEPTH):
            raise input_too_deep(MAX_JSON_DEPTH)
        parse_constant = json.strict_constant if self.strict else None
        try:
            data = json.loads(text, parse_constant=parse_constant)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        field = bad_text_field(data) if _MAY_HOLD_BAD_TEXT.search(text) else None
        if field is not None:
            raise invalid_text(field)
        return data


_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")
# In a body json.loads accepted, NUL or a lone surrogate can only have come from an escape: the parser
# refuses a raw control character, and text decoded from bytes holds no surrogate. A body without
# such an escape (almost every one) is not walked.
_MAY_HOLD_BAD_TEXT = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def bad_text_field(data: Any) -> str | None:
    """The path (``messages[0].content``) of the first string in ``data`` (parsed JSON) holding NUL
    or an unpaired surrogate (a pair is decoded to one character by the parser, so any surrogate
    left is unpaired), or None. Without recursion: the depth is bounded, but not by much."""
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            if _BAD_TEXT.search(value):
                return path or "(body)"
        elif isinstance(value, dict):
            for key, item in value.items():
                name = f"{path}.{key}" if path else str(key)
                if _BAD_TEXT.search(key):
                    return f"{path}.(key)" if path else "(key)"
                pending.append((name, item))
        elif isinstance(value, list):
            pending.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
    return None
