"""Typed errors of the agents app."""

from __future__ import annotations

from config.errors import ApplicationError


class InvalidScope(ApplicationError):
    code = "invalid_scope"
