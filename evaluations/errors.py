"""TODO"""

from __future__ import annotations

from config.errors import ApplicationError


class EvaluationInvalid(ApplicationError):
    """An evaluation cannot start or go on: no cases, a model that may not be used, or drafts that
    changed while it ran. The message says which."""

    code = "evaluation_invalid"
