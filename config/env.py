"""Typed readers for environment variables that fail loudly on malformed values, and the settings
file every process reads into its environment first.

Settings are driven only by the environment. A value that is set but cannot
be parsed is a start-up error naming the variable, never a silent fallback to a default.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured
from dotenv import dotenv_values

# The settings file read when ENV_FILE names none: `.env` at the project's root.
DEFAULT_ENV_FILE = Path(__file__).resolve().parent.parent / ".env"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
T = TypeVar("T")


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _read(name: str, default: T, parse: Callable[[str], T]) -> T:
    """``parse`` of the variable's trimmed value (it raises ``ImproperlyConfigured`` naming the
    variable when it cannot), or ``default`` when the variable is unset or empty."""
    value = _raw(name)
    return default if value is None else parse(value)


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's trimmed value, or ``default`` when unset or empty."""
    return _read(name, default, str)


def env_bool(name: str, default: bool) -> bool:
    def parse(value: str) -> bool:
        if value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise ImproperlyConfigured(f"{name} must be one of {sorted(_TRUE | _FALSE)}, got {value!r}")

    return _read(name, default, parse)


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
        if minimum is not None and number < minimum:
            raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}")
        return number

    return _read(name, default, parse)


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list; empty items are dropped."""
    return _read(name, list(default), lambda value: [i.strip() for i in value.split(",") if i.strip()])


def env_choice(name: str, default: str, *, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (compared in lower case); anything else stops start-up."""

    def parse(value: str) -> str:
        if value.lower() not in choices:
            raise ImproperlyConfigured(f"{name} must be one of {list(choices)}, got {value!r}")
        return value.lower()

    return _read(name, default, parse)


_RATE = re.compile(r"[1-9][0-9]*/(s|sec|m|min|h|hour|d|day)")


def env_rate(name: str, default: str) -> str:
    """A request rate as DRF's throttles read it: ``<count>/<s|min|h|day>``, e.g. ``600/min``."""

    def parse(value: str) -> str:
        if not _RATE.fullmatch(value):
            raise ImproperlyConfigured(f"{name} must look like 600/min (count/s|min|h|day), got {value!r}")
        return value

    return _read(name, default, parse)


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")


def env_names(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of environment variable names (upper case, digits, underscores)."""
    names = env_list(name, default)
    for item in names:
        if not _ENV_NAME.fullmatch(item):
            raise ImproperlyConfigured(f"{name} must list variable names (A-Z, 0-9, _), got {item!r}")
    return names


def env_networks(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of IP networks or addresses (``10.0.0.0/8``, ``::1``), canonical."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(f"{name} must list IP networks or addresses, got {item!r}") from None
    return networks


_PATTERN_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def env_patterns(name: str) -> dict[str, str]:
    """A JSON object of named regular expressions, ``{"employee_id": "EMP-[0-9]{6}"}``: each name
    lower case (letters, digits, ``_``), each pattern one that compiles and never matches the empty
    string everywhere. Empty when unset."""

    def parse(value: str) -> dict[str, str]:
        try:
            patterns = json.loads(value)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be a JSON object of name: regex") from None
        if not isinstance(patterns, dict):
            raise ImproperlyConfigured(f"{name} must be a JSON object of name: regex")
        for key, pattern in patterns.items():
            if not _PATTERN_NAME.fullmatch(key) or not isinstance(pattern, str):
                raise ImproperlyConfigured(f"{name}: {key!r} must name (a-z, 0-9, _) a regex string")
            try:
                compiled = re.compile(pattern)
            except re.error as error:
                raise ImproperlyConfigured(f"{name}: {key!r} does not compile ({error})") from None
            if compiled.fullmatch(""):
                raise ImproperlyConfigured(f"{name}: {key!r} matches the empty text")
        return patterns

    return _read(name, {}, parse)


def env_url(name: str, *, schemes: tuple[str, ...]) -> str | None:
    """A URL whose scheme is one of ``schemes`` and which names a host; None when unset."""

    def parse(value: str) -> str:
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

    return _read(name, None, parse)


def development_secret_key(path: Path) -> str:
    """A random key kept in ``path`` (created once, owner-only), for DEBUG runs without a configured
    key. It stays stable across restarts so sessions survive, and no key is ever in the code."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


def env_file_load() -> Path | None:
    """Read the settings file into this process's environment; the path read, or None when none was.

    The file is ``ENV_FILE`` when that variable is set (a file it names must exist: a typo would
    otherwise read nothing, silently), else :data:`DEFAULT_ENV_FILE` when it exists. It holds
    ``NAME=value`` lines as ``.env.example`` shows them, read by python-dotenv without expanding
    ``${...}`` (a ``$`` in a key stays a ``$``). A variable already in the environment keeps its value:
    the environment overrides the file. Every value goes into ``os.environ``, not only the settings':
    libraries and provider keys (named on provider rows) are read from there.

    The settings module calls this before it reads any variable, so every process that loads the
    settings (``manage.py`` and every management command, the web and worker processes, the test
    suite) reads the same file the same way; calling it again changes nothing.
    """
    named = env_str("ENV_FILE")
    path = Path(named) if named is not None else DEFAULT_ENV_FILE
    if not path.is_file():
        if named is not None:
            raise ImproperlyConfigured(f"ENV_FILE names {named!r}, which is not a file")
        return None
    for name, value in dotenv_values(path, interpolate=False, encoding="utf-8").items():
        if value is not None:  # a bare NAME line sets nothing
            os.environ.setdefault(name, value)
    return path
