"""The scopes an API client may hold. No wildcard: a client with no scopes may do nothing."""

from __future__ import annotations

SCOPES = (
    "snippets:read",
    "snippets:write",
    "skills:read",
    "skills:write",
    "configurations:use",
    "runs:create",
    "runs:read",
    "governance:read",
    "governance:classify",
)
