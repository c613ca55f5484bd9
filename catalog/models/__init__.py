"""The catalogue: providers, their models, configurations and the API clients granted them."""

from catalog.models.catalog import CatalogVersion, LlmModel, Provider, ProviderKind, Tokenizer
from catalog.models.clients import ApiClient
from catalog.models.configurations import (
    Configuration,
    ConfigurationFallback,
    ConfigurationSkill,
    ContextStrategy,
    ContextUsageNote,
)

__all__ = [
    "ApiClient",
    "CatalogVersion",
    "Configuration",
    "ConfigurationFallback",
    "ConfigurationSkill",
    "ContextStrategy",
    "ContextUsageNote",
    "LlmModel",
    "Provider",
    "ProviderKind",
    "Tokenizer",
]
