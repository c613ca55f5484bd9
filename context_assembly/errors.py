"""Typed errors of the context-assembly seam, with stable codes (CONVENTIONS.md §5).

Messages and ``extra`` name the offending field or setting, never the content of a message.
"""

from __future__ import annotations

from rest_framework import status

from config.errors import ApplicationError


class InvalidMessage(ApplicationError):
    """A chat message or tool spec does not have the OpenAI wire shape. ``extra["field"]`` names where."""

    code = "invalid_message"
    http_status = status.HTTP_400_BAD_REQUEST


class InvalidModelProfile(ApplicationError):
    """A model profile declares an impossible window, output limit, tokenizer or calibration factor."""

    code = "invalid_model_profile"
    http_status = status.HTTP_400_BAD_REQUEST


class EstimatorUnavailable(ApplicationError):
    """The tokenizer a profile needs cannot be loaded offline; nothing may be counted or sent."""

    code = "estimator_unavailable"
    http_status = status.HTTP_503_SERVICE_UNAVAILABLE
