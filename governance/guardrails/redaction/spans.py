"""From detected spans to the redacted text: every occurrence of a detected value, the union of
overlapping spans, and the replacement by placeholders."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .findings import Finding, placeholder


def occurrences(line: str, value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    start = line.find(value)
    while start != -1:
        yield start, start + len(value), kind
        start = line.find(value, start + 1)


_SHORT_WORD = re.compile(r"[a-z]{1,11}|[A-Z][a-z]{1,10}")


def replaceable_everywhere(value: str) -> bool:
    """Short plain words (a YAML ``token: enabled`` mistaken for a secret) are redacted only where
    they were detected; anything token-like is redacted at every occurrence."""
    return len(value) >= 6 and _SHORT_WORD.fullmatch(value) is None


def every_occurrence(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    values: dict[str, str] = {}
    for start, end, kind in spans:
        values.setdefault(text[start:end], kind)
    extra = [
        hit
        for value, kind in values.items()
        if replaceable_everywhere(value)
        for hit in occurrences(text, value, kind)
    ]
    return spans + extra


# Generic kinds lose ties against a named shape covering the same characters.
_GENERIC_KINDS = {"high_entropy_string": 2, "secret": 1}


def merge(spans: list[tuple[int, int, str]]) -> list[Finding]:
    """Union of overlapping spans; the widest member names the merged span."""
    merged: list[list[Any]] = []  # [start, end, kind, rank of the member naming it]
    for start, end, kind in sorted(spans, key=lambda s: (s[0], s[0] - s[1])):
        rank = (end - start, -_GENERIC_KINDS.get(kind, 0))
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if rank > last[3]:
                last[2], last[3] = kind, rank
        else:
            merged.append([start, end, kind, rank])
    return [Finding(kind=kind, start=start, end=end) for start, end, kind, _ in merged]


def apply(text: str, findings: list[Finding]) -> str:
    pieces: list[str] = []
    cursor = 0
    for finding in findings:
        pieces.append(text[cursor : finding.start])
        pieces.append(placeholder(finding.kind))
        cursor = finding.end
    pieces.append(text[cursor:])
    return "".join(pieces)
