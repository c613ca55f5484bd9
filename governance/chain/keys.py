"""The keys of the governance log's digests, each known by a short id
(docs/decisions/0033-governance-log-keys-have-ids.md).

``GOVERNANCE_LOG_KEY`` is the current key: every new event and anchor is signed with it and records
its id. ``GOVERNANCE_LOG_OLD_KEYS`` lists the keys before it (comma-separated), which only verify
what they signed. An entry ``secret:<value>`` stands for the key derived from a ``DJANGO_SECRET_KEY``
value: what the log was keyed with while ``GOVERNANCE_LOG_KEY`` was unset (still the embedded
default's key, which needs no configuration).

A key's id is the first 8 hex digits of SHA-256 over a fixed label and the key: it names the key
without revealing it, and a link is verified with the key its id names. The id is not part of the
digest (version 1 of ``canonical`` is unchanged): it only says which key to try, so a changed id
shows as an edit (the named key does not match) or as an unknown key, a break either way.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

_KEY_SALT = b"govctx.governance-log.v1"
_KEY_ID_LABEL = b"govctx.governance-log.key-id.v1:"
SECRET_PREFIX = "secret:"


def key_id(key: bytes) -> str:
    """The key's id: 8 hex digits, the same wherever the key is configured."""
    return hashlib.sha256(_KEY_ID_LABEL + key).hexdigest()[:8]


def secret_derived_key(secret_key: str) -> bytes:
    """The key the log uses when ``GOVERNANCE_LOG_KEY`` is unset, derived from ``secret_key``."""
    return hmac.new(secret_key.encode(), _KEY_SALT, hashlib.sha256).digest()


def key_material(entry: str) -> bytes:
    """The key an entry of the settings stands for (``secret:<value>``: derived from that value)."""
    if entry.startswith(SECRET_PREFIX):
        return secret_derived_key(entry[len(SECRET_PREFIX) :])
    return entry.encode()


@dataclass(frozen=True)
class LogKeys:
    """The current key and its id, and every configured key by id (the current one first)."""

    current_id: str
    current: bytes
    by_id: Mapping[str, bytes]

    def matches(self, link_key_id: str, digest: Callable[[bytes], str], stored: str) -> bool | None:
        """Whether ``stored`` is the ``digest`` of a link under the key its id names: True or False,
        or None when the id names no configured key. A link without an id (written before ids) is
        checked under every configured key, the current one first, and matches if one does."""
        if link_key_id:
            key = self.by_id.get(link_key_id)
            if key is None:
                return None
            return hmac.compare_digest(digest(key), stored)
        return any(hmac.compare_digest(digest(key), stored) for key in self.by_id.values())


def log_keys() -> LogKeys:
    """The configured keys. Raises ``ImproperlyConfigured`` when two different keys share an id."""
    configured = str(getattr(settings, "GOVERNANCE_LOG_KEY", "") or "")
    current = key_material(configured) if configured else secret_derived_key(str(settings.SECRET_KEY))
    by_id = {key_id(current): current}
    for entry in getattr(settings, "GOVERNANCE_LOG_OLD_KEYS", ()):
        key = key_material(entry)
        if by_id.setdefault(key_id(key), key) != key:
            raise ImproperlyConfigured(
                f"GOVERNANCE_LOG_OLD_KEYS holds two keys with the id {key_id(key)}: replace one of them"
            )
    return LogKeys(current_id=key_id(current), current=current, by_id=by_id)


def current_entry() -> str:
    """The current key as an entry of ``GOVERNANCE_LOG_OLD_KEYS`` would name it once it is old."""
    configured = str(getattr(settings, "GOVERNANCE_LOG_KEY", "") or "")
    return configured or SECRET_PREFIX + str(settings.SECRET_KEY)


@dataclass(frozen=True)
class KeyRotation:
    """The settings after a rotation: a new current key, and the old keys with the current one first."""

    key: str
    key_id: str
    old_keys: tuple[str, ...]
    old_key_ids: tuple[str, ...]


def key_rotation() -> KeyRotation:
    """A new random key (256 bits, URL-safe text) and the old keys that keep what was signed so far
    verifiable: the current key, then the configured old ones (each once). Keys live in the
    environment, so nothing is stored: the caller sets the values for every process."""
    old = list(dict.fromkeys([current_entry(), *getattr(settings, "GOVERNANCE_LOG_OLD_KEYS", ())]))
    for entry in old:
        if "," in entry:
            raise ImproperlyConfigured(
                f"the key with the id {key_id(key_material(entry))} holds a comma and cannot be "
                "listed in GOVERNANCE_LOG_OLD_KEYS: list it by hand after replacing the comma-free ones"
            )
    key = secrets.token_urlsafe(32)
    return KeyRotation(
        key=key,
        key_id=key_id(key.encode()),
        old_keys=tuple(old),
        old_key_ids=tuple(key_id(key_material(entry)) for entry in old),
    )
