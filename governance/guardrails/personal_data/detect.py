"""Finding personal data in a text: where a value may be, which recognizers try there, which candidates
the validators accept, how overlapping findings are settled, and the operator's patterns."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .kinds import KIND_ORDER, Finding, OperatorPattern, PersonalDataKind
from .recognizers import (
    CONTEXT_WINDOW,
    EMAIL,
    EMAIL_REACH,
    FAMILIES,
    Family,
    Recognizer,
    is_reserved_domain,
)

_NOT_DIGITS = bytes(range(48)) + bytes(range(58, 128))
# Where a value may be: two digits with nothing but separators between them, or two colons with at
# most four hexadecimal digits between them (an IPv6 address need not hold two digits in a row).
# Recognizers search only the windows around these spots: prose, the bulk of most prompts, is skipped.
_SPOT = re.compile(r"[0-9][0-9 ./()-]*[0-9]|:[0-9A-Fa-f]{0,4}:")
# Wider than the longest stretch of any value before or after its spots (an IPv6 address: 39 characters).
_MARGIN = 40
_AT = re.compile("@")
_TRIM_SHORTEST = 7  # no kind that trims (IBAN, phone) is written in fewer characters

Window = tuple[int, int]


def find_personal_data(
    text: str,
    *,
    kinds: frozenset[PersonalDataKind] | None = None,
    extra_patterns: Iterable[OperatorPattern] = (),
) -> tuple[Finding, ...]:
    """Every span of ``text`` that holds personal data, by start, none overlapping another (of two that
    overlap, the longer is kept; of two as long, the kind declared first). ``kinds`` limits the search
    (None: every kind; ``custom`` findings come only from ``extra_patterns``).

    Pure: no I/O, no state kept between calls; the findings never hold the values. Cost: one pass for
    the spots where a value may be (digits, colons, ``@``), then one pass per family of recognizers over
    the windows around them only, skipped when the text lacks what every member needs (enough digits,
    a ``+``); members and validators run only where a candidate starts.
    """
    found: list[Finding] = []
    if (kinds is None or PersonalDataKind.EMAIL in kinds) and "@" in text:
        found.extend(_emails(text))
    digits = _digit_count(text)
    if digits:
        windows = _windows(text)
        for family in FAMILIES:
            members = tuple(m for m in family.members if _applies(m, text, digits, kinds))
            if members:
                found.extend(_recognized(text, family, members, windows))
    for pattern in extra_patterns:
        found.extend(
            Finding(PersonalDataKind.CUSTOM, match.start(), match.end(), pattern.name)
            for match in pattern.regex.finditer(text)
            if match.end() > match.start()
        )
    return _without_overlaps(found)


def _digit_count(text: str) -> int:
    # Counting in bytes is C speed; a non-ASCII digit is never one of ours (the patterns ask for ASCII).
    return len(text.encode("ascii", "ignore").translate(None, _NOT_DIGITS))


def _applies(
    recognizer: Recognizer, text: str, digits: int, kinds: frozenset[PersonalDataKind] | None
) -> bool:
    if kinds is not None and recognizer.kind not in kinds:
        return False
    return digits >= recognizer.min_digits and (not recognizer.needs or recognizer.needs in text)


def _windows(text: str) -> list[Window]:
    """The stretches of ``text`` around its spots, merged where they touch. A window ends at least
    :data:`_MARGIN` characters after a spot, so no value is cut by its end (a pattern reads the end of a
    window as the end of the text); before its start, patterns still see the text."""
    return _merged((max(0, spot.start() - _MARGIN), spot.end() + _MARGIN) for spot in _SPOT.finditer(text))


def _merged(windows: Iterable[Window]) -> list[Window]:
    merged: list[Window] = []
    for start, end in windows:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _emails(text: str) -> Iterator[Finding]:
    # Around each ``@`` only: an address reaches at most EMAIL_REACH characters before it, and a
    # domain name at most 253 after.
    ats = (match.start() for match in _AT.finditer(text))
    for start, end in _merged((max(0, at - EMAIL_REACH), at + 256) for at in ats):
        for match in EMAIL.finditer(text, start, end):
            if not is_reserved_domain(match.group(1)):
                yield Finding(PersonalDataKind.EMAIL, match.start(), match.end())


def _recognized(
    text: str, family: Family, members: tuple[Recognizer, ...], windows: list[Window]
) -> Iterator[Finding]:
    """Where the family's locator finds a candidate may start, each member tries its own pattern there:
    a candidate one member rejects may be another's."""
    for window_start, window_end in windows:
        for located in family.locator.finditer(text, window_start, window_end):
            start = located.start()
            for member in members:
                match = member.pattern.match(text, start, window_end)
                if match is None:
                    continue
                if member.context is not None and not _has_context(text, start, member.context):
                    continue
                end = _valid_end(text, start, match.end(), member)
                if end is not None:
                    yield Finding(member.kind, start, end)


def _has_context(text: str, start: int, words: re.Pattern[str]) -> bool:
    return words.search(text, max(0, start - CONTEXT_WINDOW), start) is not None


def _valid_end(text: str, start: int, end: int, recognizer: Recognizer) -> int | None:
    """Where the valid value that starts at ``start`` ends, or None. A trimming recognizer retries
    without trailing space-separated groups, so a value followed by a number still counts."""
    while True:
        if recognizer.is_valid(text[start:end]):
            return end
        if not recognizer.trim:
            return None
        cut = text.rfind(" ", start, end)
        if cut - start < _TRIM_SHORTEST:
            return None
        end = cut


def _without_overlaps(found: list[Finding]) -> tuple[Finding, ...]:
    if len(found) < 2:
        return tuple(found)
    kept: list[Finding] = []
    for finding in sorted(found, key=lambda f: (f.start - f.end, KIND_ORDER[f.kind], f.start)):
        if all(finding.end <= other.start or other.end <= finding.start for other in kept):
            kept.append(finding)
    return tuple(sorted(kept, key=lambda f: (f.start, f.end)))
