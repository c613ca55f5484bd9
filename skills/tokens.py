"""Which server environment variables a skill source may name as its GitHub token (``token_env``).

A source's token is sent to GitHub as a bearer token, so naming any variable would let whoever edits
sources send any server secret out. Only the names in ``SKILL_SOURCE_TOKEN_ENVS`` are accepted, when
a source is validated (admin, API, the ``ingest_skills`` command) and again when it is synced.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ValidationError

from skills.errors import SkillSourceTokenUnavailable

TOKEN_ENV_NOT_ALLOWED = "token_env_not_allowed"


def validate_token_env(name: str) -> None:
    """Refuse a ``token_env`` outside ``SKILL_SOURCE_TOKEN_ENVS``: a ``ValidationError`` on the field
    with code ``token_env_not_allowed``. An empty name (no token) is always valid."""
    allowed = list(settings.SKILL_SOURCE_TOKEN_ENVS)
    if not name or name in allowed:
        return
    hint = f"use one of {', '.join(allowed)}" if allowed else "none is allowed"
    message = f"Not a variable this server allows for tokens (SKILL_SOURCE_TOKEN_ENVS): {hint}."
    raise ValidationError({"token_env": ValidationError(message, code=TOKEN_ENV_NOT_ALLOWED)})


def token_from_env(name: str) -> str:
    """The token held by the variable ``name``. A name outside the allow-list and an unset or empty
    variable raise one and the same :class:`SkillSourceTokenUnavailable`, so that the answer never
    tells which variables exist on the server. The token is never stored or logged."""
    token = os.environ.get(name, "") if name in settings.SKILL_SOURCE_TOKEN_ENVS else ""
    if not token:
        raise SkillSourceTokenUnavailable(
            "The source's token variable is not available: it must be listed in "
            "SKILL_SOURCE_TOKEN_ENVS and set on the server."
        )
    return token
