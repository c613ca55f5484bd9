"""Throttling by client address, for requests that carry no valid token or are refused.

A valid token is throttled per client (``API_RATE_LIMIT``, ``gateway.authentication.ClientRateThrottle``).
Everything else shares one budget per address, ``API_ANON_RATE_LIMIT``:

- requests a view lets through without a token (the schema and its docs page), counted by
  :class:`AddressRateThrottle` among DRF's throttles;
- requests answered 401 (no token, an unknown or inactive one) or ``403 permission_denied`` (a token
  without the scope). DRF authenticates and checks permissions *before* its throttles run, so these
  never reach a throttle class; the exception handler counts them with :func:`refusal_wait` instead
  and answers ``429 throttled`` once the address is over its rate.

A valid, permitted request is never slowed by others' failures at the same address: it is counted
only against its own client. The address is :func:`config.client_address.client_ip`'s: the peer's,
or the one our trusted proxies wrote into ``X-Forwarded-For``; a client cannot choose it by sending
that header. Requests whose address cannot be known share one budget.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from config.client_address import UNKNOWN, client_address


class AddressRateThrottle(SimpleRateThrottle):
    """``API_ANON_RATE_LIMIT`` per address for requests without a valid token."""

    scope = "address"

    def get_rate(self) -> str:
        # Read at request time so a changed setting (tests, a reload) applies without a restart.
        return str(settings.API_ANON_RATE_LIMIT)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.auth is not None:
            return None  # a valid token: its client's own rate applies
        return self.address_key(request)

    def address_key(self, request: Request) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_address(request) or UNKNOWN}


class _RefusalThrottle(AddressRateThrottle):
    """The same budget, for a request already refused (authenticated or not)."""

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        return self.address_key(request)


def refusal_wait(request: Request, view: Any) -> float | None:
    """Count a refused request against its address. None while the address is within its rate;
    otherwise the seconds until it may try again (at least 1), and the request is not counted."""
    throttle = _RefusalThrottle()
    if throttle.allow_request(request, view):
        return None
    return max(1.0, throttle.wait() or 0.0)
