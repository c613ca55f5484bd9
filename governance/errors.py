"""Typed governance errors with stable codes."""

from __future__ import annotations

from config.errors import ConflictError, ForbiddenError


class ContextRefused(ForbiddenError):
    """A source may not go to the serving zone. Names the source, never its content."""

    code = "context_refused"


class AppendOnlyViolation(ConflictError):
    """An append-only record was about to be changed or deleted."""

    code = "append_only"


class ReclassifyForbidden(ForbiddenError):
    """A change would lower a data class, loosen a ceiling or relax enforcement, and the actor holds
    neither the ``governance:classify`` scope nor the ``governance.reclassify`` permission.
    ``extra["fields"]`` names the fields; nothing was stored."""

    code = "reclassify_forbidden"
