"""Choosing the adapter for a provider's kind, and the pool that keeps one adapter per configuration."""

from __future__ import annotations

from django.utils.module_loading import import_string

from config.caches import cache_register
from config.lru import LruCache
from providers.base import ProviderAdapter
from providers.failures import FailureClass, ProviderError
from providers.values import ProviderConfig

# Imported on first use: the two SDKs take seconds to import, and a local-only deployment needs neither.
ADAPTERS: dict[str, str] = {
    "openai_compatible": "providers.openai_compatible.OpenAICompatibleAdapter",
    "anthropic": "providers.anthropic.AnthropicAdapter",
    "local": "providers.local.LocalAdapter",
}


def adapter_for(config: ProviderConfig) -> ProviderAdapter:
    """A new adapter for ``config``. An unknown kind is a non-retryable ``configuration`` failure."""
    path = ADAPTERS.get(config.kind)
    if path is None:
        raise ProviderError(
            f"provider {config.identifier!r} has an unknown kind",
            failure_class=FailureClass.CONFIGURATION,
            provider=config.identifier,
            extra={"kind": str(config.kind)[:64]},
        )
    adapter_class: type[ProviderAdapter] = import_string(path)
    try:
        return adapter_class(config)
    except ProviderError:
        raise
    except Exception as exc:  # e.g. the SDK refusing a base URL it cannot parse
        raise ProviderError(
            f"provider {config.identifier!r} could not be set up",
            failure_class=FailureClass.CONFIGURATION,
            provider=config.identifier,
            extra={"cause": type(exc).__name__},
        ) from None


class AdapterPool:
    """Adapters kept per configuration, so connection pools and TLS contexts are built once per
    process instead of once per call (building an SDK client costs ~90 ms). Bounded: the least
    recently used adapter is closed when the pool is full. Thread-safe; the SDK clients are too.
    A changed configuration (another key, URL or timeout) is a different key, so it never reuses a
    stale client."""

    def __init__(self, max_size: int = 32) -> None:
        self.adapters: LruCache[ProviderConfig, ProviderAdapter] = LruCache(max_size, on_evict=_close)

    def get(self, config: ProviderConfig) -> ProviderAdapter:
        return self.adapters.get_or_build(config, lambda: adapter_for(config))

    def clear(self) -> None:
        self.adapters.clear()


def _close(adapter: ProviderAdapter) -> None:
    adapter.close()


ADAPTER_POOL = AdapterPool()
cache_register(
    ADAPTER_POOL.adapters,
    name="provider_adapters",
    key="the whole ProviderConfig (kind, base URL, API key, timeout, retries, options)",
    invalidation=(
        "none needed: a changed provider row is a different key; an adapter leaving the pool "
        "(least recently used of 32, or cleared) is closed"
    ),
)
