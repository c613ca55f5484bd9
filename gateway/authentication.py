"""How an API client proves who it is, what it may do, and how often.

- :class:`BearerTokenAuthentication`: ``Authorization: Bearer <token>``; the client is found by the
  SHA-256 digest of the token (only the digest is stored). An unknown or inactive token is 401.
- :class:`ApiKeyHeaderAuthentication`: the same token in an ``x-api-key`` header, as Anthropic's
  clients send it (Claude Code with ``ANTHROPIC_API_KEY``); only the Anthropic API's views accept it.
- :class:`HasRequiredScope`: every API view names its ``required_scope`` (or one per method); a client without it gets
  403 ``permission_denied`` naming the scope. A view without one is refused (fail closed).
- :class:`ClientRateThrottle`: ``API_RATE_LIMIT`` requests per client, counted in the cache.

Which configurations and runs a client may see is decided by the selectors
(:func:`agents.selectors.configuration_get_for_client`, :func:`agents.selectors.run_get_for_client`),
which answer "not found" for rows of others so that their existence is never revealed.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from catalog.errors import ScopeMissing
from catalog.models import ApiClient
from catalog.selectors import api_client_by_token_digest
from catalog.tokens import token_digest
from config.logs import log_context_update
from config.request_headers import header

KEYWORD = "Bearer"
API_KEY_HEADER = "x-api-key"


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[ApiClient, str] | None:
        """None without an ``Authorization`` header (then 401 ``not_authenticated``); raises
        ``AuthenticationFailed`` for a malformed header, an unknown token or an inactive client."""
        # Read from META as bytes, as DRF's get_authorization_header reads it from request.headers
        # (config/request_headers.py: that would copy every header of the request for this one).
        parts = (header(request, "Authorization") or "").encode("latin-1", errors="replace").split()
        if not parts:
            return None
        if parts[0].decode("latin-1").lower() != KEYWORD.lower() or len(parts) != 2:
            raise exceptions.AuthenticationFailed("Use the header: Authorization: Bearer <token>.")
        return _client_of_token(parts[1])

    def authenticate_header(self, request: Request) -> str:
        # A WWW-Authenticate header makes DRF answer 401 rather than 403 when authentication fails.
        return f'{KEYWORD} realm="api"'


class ApiKeyHeaderAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[ApiClient, str] | None:
        """None without an ``x-api-key`` header; raises ``AuthenticationFailed`` for an unknown token
        or an inactive client, as :class:`BearerTokenAuthentication` does."""
        raw = header(request, API_KEY_HEADER)
        if raw is None:
            return None
        return _client_of_token(raw.strip().encode("latin-1", errors="replace"))


def _client_of_token(raw: bytes) -> tuple[ApiClient, str]:
    try:
        token = raw.decode("ascii")
    except UnicodeDecodeError:
        raise exceptions.AuthenticationFailed("The token is not valid.") from None
    client = api_client_by_token_digest(token_digest(token))
    if client is None or not client.is_active:
        raise exceptions.AuthenticationFailed("The token is not valid.")
    log_context_update(client=client.name)
    return client, token


class HasRequiredScope(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        client = request.user
        if not isinstance(client, ApiClient):
            return False  # DRF turns this into 401 not_authenticated
        method = request.method or ""
        if not _implements(view, method):
            return True  # the view answers 405 without running anything
        scope = required_scope(view, method)
        if not scope:
            raise ScopeMissing("This endpoint declares no scope; nobody may use it.", extra={})
        if isinstance(scope, tuple):  # any one of them
            if not set(scope) & set(client.scopes):
                named = " or ".join(repr(one) for one in scope)
                raise ScopeMissing(
                    f"This client lacks the scope {named}.", extra={"required_scope": list(scope)}
                )
        elif scope not in client.scopes:
            raise ScopeMissing(f"This client lacks the scope {scope!r}.", extra={"required_scope": scope})
        return True


def _implements(view: Any, method: str) -> bool:
    handler = method.lower()
    return handler in view.http_method_names and hasattr(view, handler)


def required_scope(view: Any, method: str) -> str | tuple[str, ...] | None:
    """A view's ``required_scope``: one scope, a tuple of scopes any one of which admits, or a mapping
    by HTTP method where a path serves reads and writes (``{"GET": "runs:read", "POST":
    "runs:create"}``). HEAD and OPTIONS count as GET."""
    declared = getattr(view, "required_scope", None)
    if isinstance(declared, dict):
        return declared.get("GET" if method in ("HEAD", "OPTIONS") else method)
    return declared


class ClientRateThrottle(SimpleRateThrottle):
    """Per client, not per address: many clients may share a gateway, one client may use many hosts."""

    scope = "client"

    def get_rate(self) -> str:
        # Read at request time so a changed setting (tests, a reload) applies without a restart.
        return str(settings.API_RATE_LIMIT)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        client = request.user
        if not isinstance(client, ApiClient):
            return None
        return self.cache_format % {"scope": self.scope, "ident": client.pk}


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "gateway.authentication.BearerTokenAuthentication"
    name = "BearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A per-client API token (create_api_client prints it once).",
        }


class ApiKeyHeaderScheme(OpenApiAuthenticationExtension):
    target_class = "gateway.authentication.ApiKeyHeaderAuthentication"
    name = "ApiKeyHeader"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": API_KEY_HEADER,
            "description": "The client token in Anthropic's header (the Anthropic API only).",
        }
