"""Typed errors of the context-assembly seam, with stable codes.

Messages and ``extra`` name the offending field or setting, never the content of a message.
"""

from __future__ import annotations

from rest_framework import status

from config.errors import ApplicationError


class InvalidMessage(ApplicationError):
    """A chat message or tool spec does not have the OpenAI wire shape. ``extra["field"]`` names where."""

    code = "invalid_message"


class InvalidModelProfile(ApplicationError):
    """A model profile declares an impossible window, output limit, tokenizer or calibration factor, or
    capabilities outside their vocabulary."""

    code = "invalid_model_profile"


class EstimatorUnavailable(ApplicationError):
    """The tokenizer a profile needs cannot be loaded offline; nothing may be counted or sent."""

    code = "estimator_unavailable"
    http_status = status.HTTP_503_SERVICE_UNAVAILABLE


class TranscriptInvalid(ApplicationError):
    """A transcript cannot be sent as it is: a tool result answers no call of the assistant message
    that opened its turn, answers a call twice, or a system message appears after the head.
    ``extra["index"]`` is the position in the transcript, ``extra["problem"]`` a stable word."""

    code = "transcript_invalid"


class ContextOverflow(ApplicationError):
    """Even the floor of the context (head, newest turn, tool specs, tail note) exceeds the budget.

    ``extra["breakdown"]`` carries the budget breakdown (token figures only, never content). 422, not
    413: the request body is acceptable to the server; it is the assembled prompt that the model's
    window cannot hold, so the client must change what it asks (shorter input, fewer tools, smaller
    ``max_tokens``), not merely send fewer bytes.
    """

    code = "context_overflow"
    http_status = status.HTTP_422_UNPROCESSABLE_ENTITY
