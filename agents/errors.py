"""Typed errors of the agents app."""

from __future__ import annotations

from rest_framework import status

from config.errors import ApplicationError, ConflictError, ForbiddenError


class MaxTokensTooLarge(ApplicationError):
    """``max_tokens`` is above the output limit of every model the configuration may call.
    ``extra["limit"]`` is the largest limit there is, ``extra["model"]`` the model that has it."""

    code = "max_tokens_too_large"


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


class MediaRefused(ApplicationError):
    """An image or file part cannot be accepted: a type or size outside the ``MEDIA_*`` limits, bytes
    that are not what they claim, a remote URL the configuration does not let us fetch, or one that
    leads to a private address, redirects or does not answer. ``extra["field"]`` names the part;
    nothing was fetched from a refused address and nothing was sent."""

    code = "media_refused"


class ModalityUnsupported(ApplicationError):
    """A part's modality (``image``, ``pdf``) is not declared by a model the send would call.
    ``extra`` names the ``modality`` and the ``model``; nothing was sent."""

    code = "modality_not_supported"


class ParameterUnsupported(ApplicationError):
    """A request parameter a model the send would call cannot take or hold (``seed`` on the Messages
    API). ``extra`` names the ``param`` and the ``model``; nothing was sent."""

    code = "unsupported_parameter"
