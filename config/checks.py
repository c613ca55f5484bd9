"""System checks of the settings that start-up cannot refuse outright (``manage.py check``, and every
``runserver`` and ``migrate``, report them). Registered when the governance app is ready
(``governance/apps.py``: ``config`` is not an app and imports none)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

PROXIES_WITHOUT_NETWORKS = "config.W001"


@register(Tags.security)
def trusted_proxies_have_networks(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``API_TRUSTED_PROXIES`` above 0 with no ``API_TRUSTED_PROXY_NETWORKS`` trusts no peer: the count
    says a proxy appends to ``X-Forwarded-For``, but the header is read only from a peer in the
    networks (config/client_address.py), so every client is counted at the proxy's address."""
    if settings.API_TRUSTED_PROXIES > 0 and not settings.API_TRUSTED_PROXY_NETWORKS:
        return [
            Warning(
                f"API_TRUSTED_PROXIES is {settings.API_TRUSTED_PROXIES} but API_TRUSTED_PROXY_NETWORKS "
                "is empty, so X-Forwarded-For is read from no peer.",
                hint="Set API_TRUSTED_PROXY_NETWORKS to the addresses your proxies connect from.",
                id=PROXIES_WITHOUT_NETWORKS,
            )
        ]
    return []
