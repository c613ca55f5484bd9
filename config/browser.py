"""Django's signed-in user and message middleware, for the pages a browser uses and not for the API.

A request under ``/api/`` authenticates by its token (``gateway/authentication.py``): it has no
signed-in user and no messages. Django's middleware built both for every request all the same (a lazy
user, and a message store over a cookie store and a session store), objects that a streamed
completion held until its end, and their work on every request. These are Django's own classes,
which skip ``/api/`` and do all of their work everywhere else: the admin and the editors' pages, the
health and metrics endpoints. Django's system checks of the admin accept them in their place.

The session middleware stays Django's own, on every request: its session store costs no query until
it is read, and Django's deploy checks of the session cookie's settings look for its name.
"""

from __future__ import annotations

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest

from config.errors import API_PREFIX


def for_browser(request: HttpRequest) -> bool:
    """False for a request of the API (under :data:`~config.errors.API_PREFIX`)."""
    return not request.path_info.startswith(API_PREFIX)


class BrowserAuthenticationMiddleware(AuthenticationMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if for_browser(request):
            super().process_request(request)


class BrowserMessageMiddleware(MessageMiddleware):
    def process_request(self, request: HttpRequest) -> None:
        if for_browser(request):
            super().process_request(request)
