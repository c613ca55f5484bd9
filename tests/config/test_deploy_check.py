"""``manage.py check --deploy`` is clean in the production configuration the README documents, and the
TLS and proxy settings come from the environment."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The README's "Behind TLS and a proxy" block, less the key (made here at run time).
PRODUCTION = {
    "DATABASE_URL": "postgres://govctx@db.internal:5432/govctx",
    "REDIS_URL": "redis://cache.internal:6379/0",
    "DJANGO_ALLOWED_HOSTS": "govctx.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://govctx.example.com",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_SECURE_HSTS_PRELOAD": "true",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
}


def manage(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))
    }
    environment.update({"APP_VAR_DIR": str(tmp_path), "DJANGO_SECRET_KEY": secrets.token_urlsafe(50), **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_in_the_documented_production_configuration(tmp_path):
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION, tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "System check identified no issues (0 silenced)."
    assert result.stderr == ""


def test_without_the_tls_settings_check_deploy_names_each_one(tmp_path):
    plain = {k: v for k, v in PRODUCTION.items() if not k.startswith("DJANGO_SECURE_")}
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=plain, tmp_path=tmp_path)
    assert result.returncode == 1
    found = sorted(word.strip(":()") for word in result.stderr.split() if word.startswith("(security.W"))
    assert found == ["security.W004", "security.W008", "security.W012", "security.W016"]


def test_the_proxy_header_and_trusted_origins_are_read_from_the_environment(tmp_path):
    script = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SECURE_PROXY_SSL_HEADER, s.CSRF_TRUSTED_ORIGINS, s.SECURE_HSTS_SECONDS, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, s.SECURE_REDIRECT_EXEMPT)"
    )
    environment = {**PRODUCTION, "DJANGO_SETTINGS_MODULE": "config.settings.base"}
    result = manage("shell", "--no-imports", "-c", script, env=environment, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "('HTTP_X_FORWARDED_PROTO', 'https') ['https://govctx.example.com'] 31536000 True True True "
        "['^healthz$', '^metrics$']"
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"DJANGO_CSRF_TRUSTED_ORIGINS": "govctx.example.com"},
            "DJANGO_CSRF_TRUSTED_ORIGINS must list origins",
        ),
        ({"DJANGO_SECURE_HSTS_SECONDS": "-1"}, "DJANGO_SECURE_HSTS_SECONDS must be at least 0"),
        ({"DJANGO_SECURE_COOKIES": "sometimes"}, "DJANGO_SECURE_COOKIES must be one of"),
    ],
)
def test_a_malformed_tls_setting_stops_start_up(tmp_path, env, message):
    result = manage("check", env={**PRODUCTION, **env}, tmp_path=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
