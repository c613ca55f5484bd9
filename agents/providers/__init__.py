"""Provider adapters: the narrow boundary between assembled context and a model's HTTP API.

A plain package (not an app) with no database access: the agents app builds a
:class:`~agents.providers.base.ProviderConfig` from its ``Provider`` row and hands it in.
"""

from __future__ import annotations

from agents.providers.base import (
    FailureClass,
    ProviderAdapter,
    ProviderCall,
    ProviderConfig,
    ProviderError,
    ProviderReply,
    Usage,
)
from agents.providers.dispatch import Attempt, DispatchResult, adapter_for, complete_with_fallbacks

__all__ = [
    "Attempt",
    "DispatchResult",
    "FailureClass",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderConfig",
    "ProviderError",
    "ProviderReply",
    "Usage",
    "adapter_for",
    "complete_with_fallbacks",
]
