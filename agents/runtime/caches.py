"""Every process-wide cache, its key and what invalidates it; :func:`caches_clear` empties them all.

Each is a :class:`config.lru.LruCache` (bounded, thread-safe, counting hits and misses) registered
with :func:`config.caches.cache_register`, with its key and invalidation in words, by the module that
owns it. Importing this module imports every owner, so :func:`registered_caches` lists them all; a
test holds this table to that list.

| cache                 | owner                           | key                                          | invalidated by                    |
|-----------------------|---------------------------------|----------------------------------------------|-----------------------------------|
| `configuration_parts` | `agents/runtime/parts.py`       | database, configuration, token, block bytes  | a new catalogue token             |
| `step_configurations` | `agents/runtime/parts.py`       | database, configuration, catalogue token     | a new catalogue token             |
| `snippet_selections`  | `agents/runtime/parts.py`       | database, catalogue token, tags in order     | a new catalogue token             |
| `pinned_versions`     | `agents/runtime/pins.py`        | database, kind, history record id            | nothing: history is immutable     |
| `pinned_contents`     | `agents/runtime/pins.py`        | database, token, configuration, pins, bytes  | a new catalogue token             |
| `redacted_texts`      | `agents/runtime/plan.py`        | the text                                     | nothing: pure                     |
| `redacted_messages`   | `agents/runtime/plan.py`        | a transcript Message's identity              | nothing: immutable, held by entry |
| `clean_texts`         | `agents/runtime/plan.py`        | a short text found clean (the guard's check) | nothing: pure                     |
| `transcripts`         | `agents/runtime/transcript.py`  | run id                                       | nothing: rows are append-only     |
| `provider_adapters`   | `agents/providers/dispatch.py`  | the whole provider config                    | nothing: a change is another key  |
| `token_counts`        | `context_assembly/estimator.py` | encoding, digest of the message or tool spec | nothing: pure                     |
| `governance_verdicts` | `governance/policy.py`          | class, ceiling, enforcement, zone, mode      | nothing: pure                     |
| `redacted_identifiers` | `governance/services.py`       | a short identifier, name or reason           | nothing: pure                     |

The catalogue token is replaced by database triggers on every write to a table a send reads
(``agents/models/catalog.py``, ``CatalogVersion``), so an entry built under an old token is never
looked up again and ages out. "Pure" means the value is a function of its key alone. An adapter
that leaves the pool (evicted or cleared) is closed.

Not caches in this sense: the tiktoken encodings (``context_assembly/encodings.py``: immutable files
verified by hash, loaded once per process and never dropped), the tool registry (code, not data),
and Django's cache framework (shared throttle counters that expire on their own).
"""

from __future__ import annotations

from agents.providers.adapters import ADAPTER_POOL
from agents.runtime import parts, pins
from agents.runtime.redactions import REDACTION_MEMO
from agents.runtime.transcript import TRANSCRIPTS
from config.caches import RegisteredCache, caches_clear, registered_caches
from context_assembly.estimator import DEFAULT_CACHE
from governance import policy, services

# The owners of the caches above; importing them here registers every cache before anyone lists them.
OWNERS = (parts, pins, policy, services, ADAPTER_POOL, REDACTION_MEMO, TRANSCRIPTS, DEFAULT_CACHE)

__all__ = ["OWNERS", "RegisteredCache", "caches_clear", "registered_caches"]
