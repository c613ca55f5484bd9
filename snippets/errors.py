"""Typed errors of the snippets app."""

from __future__ import annotations

from config.errors import ApplicationError


class SnippetInvalid(ApplicationError):
    code = "snippet_invalid"
