"""A request's headers read one by one from its ``META``.

Django's ``request.headers`` builds a case-insensitive copy of every header the first time it is read
(about thirty calls and a kilobyte a request, kept as long as the request: a waiting stream's too), for
the one or two headers a request's code asks for. :func:`header` reads the one asked for from ``META``,
under the name Django's own ``HttpHeaders.to_wsgi_name`` gives it (``Authorization`` is
``HTTP_AUTHORIZATION``; ``Content-Type`` and ``Content-Length`` have no prefix, as CGI names them).
"""

from __future__ import annotations

from typing import Any

from django.http.request import HttpHeaders


def header(request: Any, name: str) -> str | None:
    """The value of ``request``'s header ``name`` (any case; a Django or DRF request), None when it
    has none."""
    value: str | None = request.META.get(HttpHeaders.to_wsgi_name(name))
    return value
