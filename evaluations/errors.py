"""Errors of evaluations, with stable codes (rendered by the one API exception handler)."""

from __future__ import annotations

from config.errors import ApplicationError


class EvaluationInvalid(ApplicationError):
    """An evaluation cannot start or go on: no cases, a model that may not be used, a version that is
    not the configuration's, or drafts that changed while it ran. The message says which."""

    code = "evaluation_invalid"
