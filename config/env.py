"""Typed readers for environment variables that fail loudly on malformed values.

Settings are driven only by the environment. A value that is set but cannot
be parsed is a start-up error naming the variable, never a silent fallback to a default.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's trimmed value, or ``default`` when unset or empty."""
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of {sorted(_TRUE | _FALSE)}, got {value!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list; empty items are dropped."""
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, default: str, *, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (compared in lower case); anything else stops start-up."""
    value = _raw(name)
    if value is None:
        return default
    if value.lower() not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {list(choices)}, got {value!r}")
    return value.lower()


_RATE = re.compile(r"[1-9][0-9]*/(s|sec|m|min|h|hour|d|day)")


def env_rate(name: str, default: str) -> str:
    """A request rate as DRF's throttles read it: ``<count>/<s|min|h|day>``, e.g. ``600/min``."""
    value = _raw(name)
    if value is None:
        return default
    if not _RATE.fullmatch(value):
        raise ImproperlyConfigured(f"{name} must look like 600/min (count/s|min|h|day), got {value!r}")
    return value


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")


def env_names(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of environment variable names (upper case, digits, underscores)."""
    names = env_list(name, default)
    for item in names:
        if not _ENV_NAME.fullmatch(item):
            raise ImproperlyConfigured(f"{name} must list variable names (A-Z, 0-9, _), got {item!r}")
    return names


def env_url(name: str, *, schemes: tuple[str, ...]) -> str | None:
    """A URL whose scheme is one of ``schemes`` and which names a host; None when unset."""
    value = _raw(name)
    if value is None:
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} is not a valid URL") from None
    if parts.scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name} must use one of the schemes {list(schemes)}, got {parts.scheme!r}"
        )
    if parts.scheme != "sqlite" and not parts.hostname:
        raise ImproperlyConfigured(f"{name} must name a host")
    return value


def development_secret_key(path: Path) -> str:
    """A random key kept in ``path`` (created once, owner-only), for DEBUG runs without a configured
    key. It stays stable across restarts so sessions survive, and no key is ever in the code."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()
