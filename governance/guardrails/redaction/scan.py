"""Redaction of one text: every source of spans, merged and replaced."""

from __future__ import annotations

from .assignments import assignment_spans
from .catalogue import catalogue_spans, lower_ascii
from .findings import Finding, Redaction
from .library import library_spans
from .spans import apply, every_occurrence, merge, occurrences


def detect(text: str, *, known_values: dict[str, str] | None = None) -> list[Finding]:
    """Merged findings for ``text``. ``known_values`` (value → kind) are secrets detected elsewhere in
    the same payload, also removed here. Raises RedactionFailed when the scanner fails."""
    lowered = lower_ascii(text)
    spans = list(catalogue_spans(text, lowered))
    spans.extend(assignment_spans(text, lowered))
    spans.extend(library_spans(text, lowered))
    for value, kind in (known_values or {}).items():
        spans.extend(occurrences(text, value, kind))
    return merge(every_occurrence(text, spans))


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by its placeholder. Deterministic and idempotent.

    Cost is linear in the text: about 40 ms per 200 KB of prose, code and config; dense single-line
    payloads (minified JSON full of keys) cost up to ~0.3 s, spent in detect-secrets' own regexes.
    Raises RedactionFailed when the scanner fails (the caller refuses the call)."""
    if not text:
        return Redaction(text=text, findings=())
    findings = detect(text)
    return Redaction(text=apply(text, findings), findings=tuple(findings))
