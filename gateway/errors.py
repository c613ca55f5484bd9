"""TODO"""

from __future__ import annotations

from config.errors import NotFoundError


class PreviousResponseNotFound(NotFoundError):
    """``previous_response_id`` names no response this client stored (unknown, another client's, or
    made with ``store: false``): all answer the same."""

    code = "previous_response_not_found"
