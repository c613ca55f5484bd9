"""A request's headers read one by one from its ``META``.

Django's ``request.headers`` builds a case-insensitive copy of every header the first time it is read
(about thirty calls and a kilobyte a request, kept as long as the request: a waiting stream's too), for
the one or two headers a request's code asks for. :func:`header` reads the one asked for from ``META``,
where Django's handlers put every header: ``Authorization`` as ``HTTP_AUTHORIZATION``,
``Content-Type`` and ``Content-Length`` without the prefix, as CGI names them.
"""

from __future__ import annotations

from typing import Any

_UNPREFIXED = frozenset(("CONTENT_TYPE", "CONTENT_LENGTH"))


def meta_key(name: str) -> str:
    """The ``META`` key of the header ``name`` (any case): ``X-Data-Class`` is ``HTTP_X_DATA_CLASS``."""
    key = name.upper().replace("-", "_")
    return key if key in _UNPREFIXED else f"HTTP_{key}"


def header(request: Any, name: str) -> str | None:
    """The value of ``request``'s header ``name`` (a Django or DRF request), None when it has none."""
    value: str | None = request.META.get(meta_key(name))
    return value
