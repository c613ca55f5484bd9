"""Typed governance errors with stable codes."""

from __future__ import annotations

from config.errors import ApplicationError, ConflictError, ForbiddenError


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


class PersonalDataFound(ApplicationError):
    """A write's text holds personal data under a declared class below ``personal_data``, and the
    write did not ask to keep the class. ``extra["findings"]`` names each finding's kind, field and
    line (never the value); ``extra["override_field"]`` names the field that keeps the class. Nothing
    was stored."""

    code = "personal_data_found"
