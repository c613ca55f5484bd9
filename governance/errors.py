"""Typed governance errors with stable codes."""

from __future__ import annotations

from rest_framework import status

from config.errors import ApplicationError


class ContextRefused(ApplicationError):
    """A source may not go to the serving zone. Names the source, never its content."""

    code = "context_refused"
    http_status = status.HTTP_403_FORBIDDEN


class AppendOnlyViolation(ApplicationError):
    """An append-only record was about to be changed or deleted."""

    code = "append_only"
    http_status = status.HTTP_409_CONFLICT


class ReclassifyForbidden(ApplicationError):
    """A change would lower a data class, loosen a ceiling or relax enforcement, and the actor holds
    neither the ``governance:classify`` scope nor the ``governance.reclassify`` permission.
    ``extra["fields"]`` names the fields; nothing was stored."""

    code = "reclassify_forbidden"
    http_status = status.HTTP_403_FORBIDDEN
