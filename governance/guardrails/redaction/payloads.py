"""Redaction of a JSON-like value: every string, dict keys included, with the key as context."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from .assignments import kind_for_key
from .findings import Finding
from .placeholders import is_placeholder
from .scan import detect
from .spans import apply, merge, occurrences, replaceable_everywhere


def redact_json(value: Any) -> tuple[Any, dict[str, int]]:
    """Redact every string (dict keys included) of a JSON-like value; return (new value, counts by kind).

    A string under a secret-bearing key (``{"password": "..."}``) is redacted whole, its context being
    the key; a secret found anywhere in the payload is removed from every string of it."""
    first_pass: dict[str, list[Finding]] = {}
    known: dict[str, str] = {}
    for text, key_kind in _strings(value, None):
        if key_kind is not None and replaceable_everywhere(text) and not is_placeholder(text):
            known.setdefault(text, key_kind)
        if text not in first_pass:
            first_pass[text] = detect(text)
            for finding in first_pass[text]:
                secret = text[finding.start : finding.end]
                if replaceable_everywhere(secret):
                    known.setdefault(secret, finding.kind)
    counts: Counter[str] = Counter()

    def redact_string(text: str, key_kind: str | None) -> str:
        if key_kind is not None and text and not is_placeholder(text):
            findings = [Finding(kind=key_kind, start=0, end=len(text))]
        else:
            spans = [(f.start, f.end, f.kind) for f in first_pass[text]]
            spans.extend(hit for secret, kind in known.items() for hit in occurrences(text, secret, kind))
            findings = merge(spans)
        counts.update(finding.kind for finding in findings)
        return apply(text, findings)

    return _rebuild(value, redact_string, None), dict(sorted(counts.items()))


def _strings(value: Any, key_kind: str | None) -> Iterator[tuple[str, str | None]]:
    """Every string of a JSON-like value with the secret kind implied by the key it sits under."""
    if isinstance(value, str):
        yield value, key_kind
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key, None
            yield from _strings(item, kind_for_key(key) if isinstance(key, str) else None)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item, key_kind)


def _rebuild(value: Any, redact_string: Callable[[str, str | None], str], key_kind: str | None) -> Any:
    if isinstance(value, str):
        return redact_string(value, key_kind)
    if isinstance(value, dict):
        return {
            (redact_string(key, None) if isinstance(key, str) else key): _rebuild(
                item, redact_string, kind_for_key(key) if isinstance(key, str) else None
            )
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(_rebuild(item, redact_string, key_kind) for item in value)
    return value
