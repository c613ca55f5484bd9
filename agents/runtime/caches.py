"""Every process-wide cache, registered by the module that owns it; :func:`caches_clear` empties
them all.

Importing this module imports every owner, so :func:`registered_caches` lists them all. The table
of caches (name, owner, kind, key, what invalidates each) is in docs/architecture.md, "Per-process
caches"; tests/config/test_cache_registry.py holds it to the registry, which records each cache's
owner itself (``config.caches.cache_register``).
"""

from __future__ import annotations

from agents.runtime import conversation, parts, pins
from agents.runtime.redactions import REDACTION_MEMO
from agents.runtime.transcript import TRANSCRIPTS
from catalog.models import sql
from config.caches import RegisteredCache, caches_clear, registered_caches
from context_assembly.estimator import DEFAULT_CACHE
from governance import policy, services
from governance.guardrails.redaction import catalogue
from providers.adapters import ADAPTER_POOL
from tools.mcp import LISTINGS

# The owners of the caches above; importing them here registers every cache before anyone lists them.
OWNERS = (
    catalogue,
    conversation,
    parts,
    pins,
    policy,
    services,
    sql,
    ADAPTER_POOL,
    REDACTION_MEMO,
    TRANSCRIPTS,
    DEFAULT_CACHE,
    LISTINGS,
)

__all__ = ["OWNERS", "RegisteredCache", "caches_clear", "registered_caches"]
