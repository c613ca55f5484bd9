"""Typed errors of the snippets app."""

from __future__ import annotations

from config.errors import ApplicationError


class SnippetNotFound(ApplicationError):
    code = "not_found"
    http_status = 404
