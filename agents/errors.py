"""Typed errors of the agents app."""

from __future__ import annotations

from rest_framework import status

from config.errors import ApplicationError, ConflictError, ForbiddenError, NotFoundError


class InvalidScope(ApplicationError):
    code = "invalid_scope"


class ConfigurationInactive(ConflictError):
    code = "configuration_inactive"


class ModelInactive(ConflictError):
    """No active target is left: the model and every fallback, or their providers, are switched off."""

    code = "model_inactive"


class MaxTokensTooLarge(ApplicationError):
    """``max_tokens`` is above the output limit of every model the configuration may call.
    ``extra["limit"]`` is the largest limit there is, ``extra["model"]`` the model that has it."""

    code = "max_tokens_too_large"


class UnknownSkills(ApplicationError):
    code = "unknown_skills"


class ScopeMissing(ForbiddenError):
    """The client's token lacks the scope the endpoint requires. ``extra["required_scope"]`` names it."""

    code = "permission_denied"


class NotVisible(NotFoundError):
    """Unknown, or belonging to another client: both answer the same, so existence is never revealed."""


class PreviousResponseNotFound(NotFoundError):
    """``previous_response_id`` names no response this client stored (unknown, another client's, or
    made with ``store: false``): all answer the same."""

    code = "previous_response_not_found"


class RunFinished(ConflictError):
    """The run is already completed, failed or cancelled; there is nothing to cancel."""

    code = "run_finished"


class BudgetExhausted(ApplicationError):
    """The send does not fit the client's daily budget; nothing was sent. ``extra`` holds figures only:
    ``kind`` (``tokens`` or ``cost``), ``limit``, ``used``, ``reserved``, ``estimate``, ``reset_at``
    (the next UTC midnight, ISO 8601) and ``retry_after`` (seconds until then, also the
    ``Retry-After`` header)."""

    code = "budget_exhausted"
    http_status = status.HTTP_429_TOO_MANY_REQUESTS

    def response_headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.extra["retry_after"])}


class ApprovalDecided(ConflictError):
    """The tool call's approval was already decided (approved, denied or expired); it is decided once.
    ``extra["decision"]`` names the decision that stands."""

    code = "approval_decided"


class ApprovalWithheld(ForbiddenError):
    """The call's arguments are classified above the client's trust zone: it cannot see what it would
    approve. Denying stays open to it."""

    code = "approval_withheld"


class EvaluationInvalid(ApplicationError):
    """An evaluation cannot start or go on: no cases, a model that may not be used, or drafts that
    changed while it ran. The message says which."""

    code = "evaluation_invalid"
