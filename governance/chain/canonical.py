"""The canonical content of an event and of an anchor, and its digest.

A digest is HMAC-SHA256 under the log key over a canonical JSON document (sorted keys, no spaces,
ASCII, times in UTC with microseconds, version ``1``). Keyed, because a plain hash over content anyone
can read is one anyone with write access to the database can recompute after changing the content:
without the key an edited, deleted or inserted event cannot be made to verify. New links are signed
with the current key; each records the id of the key that signed it, and the keys before the current
one still verify what they signed (``governance.chain.keys``).

The fields and their rendering are part of the stored data: changing either needs a new version
(and a verifier that reads both), never an edit of version 1.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence

from governance.chain.keys import log_keys

VERSION = 1
GENESIS = "0" * 64  # the "previous digest" of a chain's first event and of the first anchor

# The chained fields of an event, in no particular order (the document's keys are sorted).
EVENT_FIELDS = (
    "chain", "seq", "prev_hash", "created_at", "correlation_id", "decision", "outcome", "source_kind",
    "source_identifier", "data_class", "ceiling", "zone", "reason", "provider", "model",
    "configuration", "api_client", "run", "step",
)  # fmt: skip
ANCHOR_FIELDS = ("seq", "prev_hash", "created_at", "heads")


def log_key() -> bytes:
    """The current key, which signs every new link (``governance.chain.keys``)."""
    return log_keys().current


def event_digest(values: Mapping[str, object], key: bytes | None = None) -> str:
    """The digest of an event given its :data:`EVENT_FIELDS` (``prev_hash`` included, so the digest
    binds the event to the one before it in its chain)."""
    return _digest("event", {name: values[name] for name in EVENT_FIELDS}, key)


def anchor_digest(values: Mapping[str, object], key: bytes | None = None) -> str:
    """The digest of an anchor given its :data:`ANCHOR_FIELDS`."""
    return _digest("anchor", {name: values[name] for name in ANCHOR_FIELDS}, key)


def _digest(kind: str, values: dict[str, object], key: bytes | None) -> str:
    document = {name: _canonical(value) for name, value in values.items()}
    text = json.dumps(
        {"kind": kind, "v": VERSION, **document}, sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hmac.new(key if key is not None else log_key(), text.encode(), hashlib.sha256).hexdigest()


def _canonical(value: object) -> object:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ValueError("a chained time must be aware")
        return value.astimezone(datetime.UTC).isoformat(timespec="microseconds")
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_canonical(item) for item in value]
    if isinstance(value, Mapping):
        return {str(name): _canonical(item) for name, item in value.items()}
    return value
