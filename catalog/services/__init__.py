"""Writes for the catalogue, by topic: API clients and their tokens, and configurations
(:mod:`.clients`); declassifying a configuration's answers (:mod:`.flow`).

The app's services are imported from here.
"""

from catalog.services.clients import (
    TOKEN_PREFIX,
    IssuedClient,
    api_client_create,
    api_client_rotate_token,
    configuration_save,
)
from catalog.services.flow import answers_declassify

__all__ = [
    "TOKEN_PREFIX",
    "IssuedClient",
    "answers_declassify",
    "api_client_create",
    "api_client_rotate_token",
    "configuration_save",
]
