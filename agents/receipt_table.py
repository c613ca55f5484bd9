"""A receipt (agents/runtime/receipts.py) as a table people read: one row per thing it names, its
vocabulary values by their labels, and its sources in a table of their own. Every key is shown: one
this module does not know is listed under its own name, with its value as stored."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from governance.admin import vocabulary_label
from governance.vocabulary import DataClass, Integrity, Outcome, SourceKind, TrustZone

NONE = "—"


@dataclass(frozen=True)
class ReceiptSource:
    kind: str
    identifiers: str
    data_class: str
    outcome: str
    version: str


@dataclass(frozen=True)
class ReceiptTable:
    rows: list[tuple[str, str]]
    sources: list[ReceiptSource]


def _counts(counts: Any) -> str:
    """``{"email": 2, "phone": 1}`` as "email 2, phone 1"; none as "none"."""
    if not isinstance(counts, Mapping) or not counts:
        return "none"
    return ", ".join(f"{kind} {count}" for kind, count in counts.items())


def _zone(value: Any) -> str:
    return vocabulary_label(TrustZone, value) if value else NONE


def _raised(raised: Any) -> str:
    if not isinstance(raised, list) or not raised:
        return "none"
    return "; ".join(
        f"{vocabulary_label(SourceKind, item.get('kind', ''))} {item.get('identifier', '')}: "
        f"{_counts(item.get('found'))}".strip()
        for item in raised
        if isinstance(item, Mapping)
    )


def _personal_data(found: Any) -> list[tuple[str, str]]:
    found = found if isinstance(found, Mapping) else {}
    return [
        ("Personal data sent", _counts(found.get("sent"))),
        ("Personal data sent as placeholders", _counts(found.get("pseudonymized"))),
        ("Personal data in the reply", _counts(found.get("reply"))),
        ("Sources raised by personal data", _raised(found.get("raised"))),
    ]


_KNOWN = {
    "decision_id", "zone", "receiver_zone", "declassified_to", "label", "receiver_label", "integrity",
    "untrusted_sources", "sources", "redactions", "personal_data", "model", "provider", "routed_from",
}  # fmt: skip


def receipt_table(receipt: Mapping[str, Any]) -> ReceiptTable:
    given = receipt.get("redactions")
    redactions: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    model = "/".join(str(part) for part in (receipt.get("provider"), receipt.get("model")) if part)
    rows = [
        ("Decision", str(receipt.get("decision_id") or NONE)),
        ("Model", model or NONE),
        ("Zone of the call", _zone(receipt.get("zone"))),
        ("Routed from zone", _zone(receipt.get("routed_from"))),
        ("Receiver's zone", _zone(receipt.get("receiver_zone"))),
        ("Answers declassified to", _zone(receipt.get("declassified_to"))),
        ("Reply's label", vocabulary_label(DataClass, receipt.get("label") or "")),
        ("Receiver's label", vocabulary_label(DataClass, receipt.get("receiver_label") or "")),
        ("Integrity", vocabulary_label(Integrity, receipt.get("integrity") or "")),
        ("Untrusted sources", ", ".join(receipt.get("untrusted_sources") or []) or "none"),
        ("Redacted in what was sent", _counts(redactions.get("sent"))),
        ("Redacted in the reply", _counts(redactions.get("reply"))),
        *_personal_data(receipt.get("personal_data")),
    ]
    rows += [
        (key, json.dumps(value, ensure_ascii=False, sort_keys=True))
        for key, value in receipt.items()
        if key not in _KNOWN
    ]
    sources = [
        ReceiptSource(
            kind=vocabulary_label(SourceKind, source.get("kind") or ""),
            identifiers=", ".join(str(i) for i in source.get("identifiers") or []) or NONE,
            data_class=vocabulary_label(DataClass, source.get("data_class") or ""),
            outcome=vocabulary_label(Outcome, source.get("outcome") or ""),
            version=NONE if source.get("pinned_version") is None else str(source["pinned_version"]),
        )
        for source in receipt.get("sources") or []
        if isinstance(source, Mapping)
    ]
    return ReceiptTable(rows, sources)
