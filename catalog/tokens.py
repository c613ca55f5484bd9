"""API client tokens are stored only as their digest; authentication and issuing both use this one."""

from __future__ import annotations

import hashlib


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
