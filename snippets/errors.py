"""Typed errors of the snippets app."""

from __future__ import annotations

from config.errors import NotFoundError


class SnippetNotFound(NotFoundError):
    """No snippet with that identifier."""
