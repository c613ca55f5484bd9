"""The scopes an API client may hold. No wildcard: a client with no scopes may do nothing."""

from __future__ import annotations

# Lowering a data class, loosening a ceiling or relaxing enforcement through the API needs this scope.
from governance.actors import CLASSIFY_SCOPE

SCOPES = (
    "snippets:read",
    "snippets:write",
    "skills:read",
    "skills:write",
    "configurations:use",
    "runs:create",
    "runs:read",
    # Approving or denying a tool call a run waits on (gateway/apis/approvals.py).
    "runs:approve",
    "governance:read",
    # Scoring an answer the client received (gateway/apis/scores.py).
    "scores:write",
    CLASSIFY_SCOPE,
)
