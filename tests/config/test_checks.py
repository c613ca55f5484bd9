"""``manage.py check`` warns about proxy settings that trust no proxy (config/checks.py)."""

from __future__ import annotations

from django.core.checks import Warning, run_checks

from config.checks import PROXIES_WITHOUT_NETWORKS


def proxy_warnings() -> list:
    return [m for m in run_checks(include_deployment_checks=False) if m.id == PROXIES_WITHOUT_NETWORKS]


def test_a_proxy_count_without_proxy_networks_is_a_warning(settings):
    settings.API_TRUSTED_PROXIES, settings.API_TRUSTED_PROXY_NETWORKS = 2, []
    assert proxy_warnings() == [
        Warning(
            "API_TRUSTED_PROXIES is 2 but API_TRUSTED_PROXY_NETWORKS is empty, so X-Forwarded-For is read "
            "from no peer.",
            hint="Set API_TRUSTED_PROXY_NETWORKS to the addresses your proxies connect from.",
            id=PROXIES_WITHOUT_NETWORKS,
        )
    ]


def test_no_warning_with_networks_or_without_proxies(settings):
    settings.API_TRUSTED_PROXIES, settings.API_TRUSTED_PROXY_NETWORKS = 1, ["10.0.3.7/32"]
    assert proxy_warnings() == []
    settings.API_TRUSTED_PROXIES, settings.API_TRUSTED_PROXY_NETWORKS = 0, []
    assert proxy_warnings() == []
