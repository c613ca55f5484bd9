"""Typed errors of the agents app."""

from __future__ import annotations

from config.errors import ApplicationError


class InvalidScope(ApplicationError):
    code = "invalid_scope"


class ConfigurationInactive(ApplicationError):
    code = "configuration_inactive"
    http_status = 409


class UnknownSkills(ApplicationError):
    code = "unknown_skills"
