"""Typed errors of the agents app."""

from __future__ import annotations

from config.errors import ApplicationError, ConflictError, ForbiddenError, NotFoundError


class InvalidScope(ApplicationError):
    code = "invalid_scope"


class ConfigurationInactive(ConflictError):
    code = "configuration_inactive"


class ModelInactive(ConflictError):
    """No active target is left: the model and every fallback, or their providers, are switched off."""

    code = "model_inactive"


class ModalityUnsupported(ApplicationError):
    """The configuration's model does not serve what was asked (the catalogue declares it): a chat
    model asked for embeddings, or an embedding model for a completion. ``extra`` names the
    ``model`` and the ``modality``; nothing was sent."""

    code = "modality_unsupported"


class UnknownSkills(ApplicationError):
    code = "unknown_skills"


class ScopeMissing(ForbiddenError):
    """The client's token lacks the scope the endpoint requires. ``extra["required_scope"]`` names it."""

    code = "permission_denied"


class NotVisible(NotFoundError):
    """Unknown, or belonging to another client: both answer the same, so existence is never revealed."""
