"""Prompt-injection scanner for untrusted text (skills at ingest, snippets when saved, tool output, what
an MCP server lists of its tools).

``scan_for_injection(text, tool_names=...)`` is a pure function: no database, no network, deterministic. Rules are
regular expressions over a *normalised* copy of the text: NFKC per character (full-width and other
compatibility forms fold to ASCII), zero-width characters and soft hyphens removed, so that
``i\u200bgnore previous instructions`` is still an override. Every finding's ``start``/``end`` are
mapped back to the ORIGINAL text (the span from the first to the last original character involved).
Invisible characters themselves are findings too, reported on the original text.

Content a tool returned is scanned with the names of the tools the model may call (``tool_names``): a
result naming one (``tool_name``) is a signal, where a tool's own description naming a tool is not.
Findings are signals only: they never make content more trusted, nor are they the only defence
(docs/decisions/0040-integrity-labels-and-consequential-tools.md).

An excerpt is at most 80 characters of the normalised match, with secrets redacted (it is stored and
shown to editors). A redaction failure propagates as ``RedactionFailed``: we never store what we could
not scan. ``injection_rules(text, tool_names=...)`` names the rules the scan would find, with less work
(what a tool result's screening keeps). The rules and the shortcuts a scan takes are
``governance/guardrails/injection_rules.py``'s.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .injection_rules import (
    _I,
    _INVISIBLE_RULES,
    _LOW,
    _RULES,
    _RULES_WITHOUT_ANCHORS,  # noqa: F401 - a test runs every pattern without its shortcuts through it
    _ZERO_WIDTH,
    InjectionSeverity,
    _Rule,
)
from .redaction import Finding, detect, placeholder

__all__ = [
    "EXCERPT_LIMIT",
    "InjectionFinding",
    "InjectionSeverity",
    "injection_rules",
    "max_severity",
    "scan_for_injection",
]

EXCERPT_LIMIT = 80


@dataclass(frozen=True, slots=True)
class InjectionFinding:
    rule: str
    severity: InjectionSeverity
    start: int
    end: int
    excerpt: str


def max_severity(findings: Iterable[InjectionFinding]) -> InjectionSeverity | None:
    """The most severe finding's severity, or None when there is no finding."""
    return max((finding.severity for finding in findings), key=lambda s: s.rank, default=None)


def scan_for_injection(
    text: str, *, tool_names: Iterable[str] = (), excerpts: bool = True
) -> tuple[InjectionFinding, ...]:
    """Every rule match in ``text``, ordered by (start, rule); with ``tool_names``, every mention of
    one of those tools too (``tool_name``). ``excerpts=False``: every excerpt empty, and no secret
    search (for text already redacted whose findings are not shown). Pure; raises RedactionFailed
    only."""
    if not text:
        return ()
    findings = [
        InjectionFinding(rule.name, rule.severity, start, end, _visible(text[start:end]))
        for rule in (() if text.isascii() else _INVISIBLE_RULES)  # every one is outside ASCII
        for start, end in _spans(rule.pattern, text)
    ]
    normalised, origin = _normalise(text)
    lowered = _lowered(normalised)
    secrets = detect(normalised) if excerpts else []
    for rule in _runnable(_RULES, _tool_rules(tool_names), lowered):
        for start, end in _rule_spans(rule, normalised, lowered):
            excerpt = _excerpt(normalised, start, end, secrets) if excerpts else ""
            findings.append(
                InjectionFinding(rule.name, rule.severity, origin[start], origin[end - 1] + 1, excerpt)
            )
    return tuple(_deduplicated(sorted(findings, key=lambda f: (f.start, f.rule, -f.severity.rank))))


def injection_rules(text: str, *, tool_names: Iterable[str] = ()) -> tuple[str, ...]:
    """The names of the rules :func:`scan_for_injection` finds in ``text``, sorted, each once. The
    same answer with less work: a rule stops at its first match, a rule already found skips its other
    patterns, and no finding, span or excerpt is built."""
    if not text:
        return ()
    found = set()
    if not text.isascii():  # every invisible character is outside ASCII
        found = {rule.name for rule in _INVISIBLE_RULES if next(_spans(rule.pattern, text), None)}
    normalised, _ = _normalise(text, origins=False)
    lowered = _lowered(normalised)
    for rule in _runnable(_RULES, _tool_rules(tool_names), lowered):
        if rule.name not in found and _rule_matches(rule, normalised, lowered):
            found.add(rule.name)
    return tuple(sorted(found))


def _rule_matches(rule: _Rule, normalised: str, lowered: str) -> bool:
    """Whether ``rule`` matches ``normalised`` anywhere (:func:`_rule_spans` finds anything), trying
    each start word's positions as they are found."""
    if not rule.starts or len(lowered) != len(normalised):
        return next(_spans(rule.pattern, normalised), None) is not None
    match, find = rule.pattern.match, lowered.find
    for word in rule.starts:
        at = find(word)
        while at != -1:
            found = match(normalised, at)
            if found is not None and found.end() > at:
                return True
            at = find(word, at + 1)
    return False


def _lowered(normalised: str) -> str:
    """Lower case as the patterns' IGNORECASE reads it (a dotless or dotted i is an i)."""
    lowered = normalised.lower()
    if lowered.isascii():
        return lowered
    return lowered.replace("\u0131", "i").replace("i\u0307", "i")


def _runnable(rules: tuple[_Rule, ...], tool_rules: tuple[_Rule, ...], lowered: str) -> list[_Rule]:
    """The rules that may match ``lowered``, in order: those without anchors, and those whose text
    holds one of their anchors (and the character they require). Most text holds none: that answer
    costs one pass over its words and one search per mark (:class:`_AnchorIndex`)."""
    index = _AnchorIndex.of(rules)
    positions = set(index.unanchored)
    for word in index.words.intersection(_letter_runs(lowered)):
        positions.update(index.by_word[word])
    for mark, anchors in index.others_by_mark:
        if mark in lowered:
            for anchor in anchors:
                if anchor in lowered:
                    positions.update(index.by_word[anchor])
    runnable = []
    for position in sorted(positions):
        rule = rules[position]
        if not rule.requires or rule.requires in lowered:
            runnable.append(rule)
    for rule in tool_rules:
        for anchor in rule.anchors:
            if anchor in lowered:
                runnable.append(rule)
                break
    return runnable


# An anchor of letters only is, in every match, a whole run of letters: every pattern bounds it by
# \b, a blank, a colon or a markup character (tests/governance/test_injection_shortcuts.py holds the
# rules to it), so the runs of letters a text holds tell which such anchors it holds, in one pass
# instead of one search per word.
_LETTERS = re.compile("[a-z]+")
_ASCII_NON_LETTERS = str.maketrans({chr(code): " " for code in range(128) if not "a" <= chr(code) <= "z"})


def _letter_runs(lowered: str) -> list[str]:
    """The runs of the letters a-z in ``lowered`` (ASCII text: one translation and a split)."""
    if lowered.isascii():
        return lowered.translate(_ASCII_NON_LETTERS).split()
    return _LETTERS.findall(lowered)


@dataclass(frozen=True)
class _AnchorIndex:
    """The rules of one table by anchor: ``words`` (letters only), the other anchors grouped by their
    first character that is not a letter (``others_by_mark``: a text without that mark holds none of
    them), the rules each anchor names (``by_word``), and the rules without anchors."""

    rules: tuple[_Rule, ...]
    words: frozenset[str]
    others_by_mark: tuple[tuple[str, tuple[str, ...]], ...]
    by_word: dict[str, tuple[int, ...]]
    unanchored: tuple[int, ...]

    @classmethod
    def of(cls, rules: tuple[_Rule, ...]) -> _AnchorIndex:
        known = _ANCHOR_INDEXES.get(id(rules))
        if known is not None and known.rules is rules:
            return known
        by_word: dict[str, list[int]] = {}
        for position, rule in enumerate(rules):
            for anchor in rule.anchors:
                by_word.setdefault(anchor, []).append(position)
        words = frozenset(word for word in by_word if _LETTERS.fullmatch(word))
        by_mark: dict[str, list[str]] = {}
        for anchor in sorted(set(by_word) - words):
            mark = next(char for char in anchor if not "a" <= char <= "z")
            by_mark.setdefault(mark, []).append(anchor)
        index = cls(
            rules,
            words,
            tuple((mark, tuple(anchors)) for mark, anchors in sorted(by_mark.items())),
            {word: tuple(positions) for word, positions in by_word.items()},
            tuple(position for position, rule in enumerate(rules) if not rule.anchors),
        )
        _ANCHOR_INDEXES[id(rules)] = index
        return index


_ANCHOR_INDEXES: dict[int, _AnchorIndex] = {}


def _rule_spans(rule: _Rule, normalised: str, lowered: str) -> Iterator[tuple[int, int]]:
    """What ``rule.pattern.finditer`` finds (non-empty matches), tried only where one of the rule's
    ``starts`` occurs when it has them: every match begins there, so trying each such position in
    order, after the last match, finds the same matches. ``lowered`` must be aligned with
    ``normalised`` (the same length) for its positions to be used; else every position is tried."""
    if not rule.starts or len(lowered) != len(normalised):
        yield from _spans(rule.pattern, normalised)
        return
    match = rule.pattern.match
    end = 0
    for position in _positions(lowered, rule.starts):
        if position < end:
            continue
        found = match(normalised, position)
        if found is not None and found.end() > position:
            end = found.end()
            yield position, end


def _positions(lowered: str, words: tuple[str, ...]) -> list[int]:
    """Every position in ``lowered`` where one of ``words`` occurs, ascending."""
    positions: set[int] = set()
    for word in words:
        find = lowered.find
        at = find(word)
        while at != -1:
            positions.add(at)
            at = find(word, at + 1)
    return sorted(positions)


def _tool_rules(tool_names: Iterable[str]) -> tuple[_Rule, ...]:
    return _tool_rule(tuple(tool_names))


@lru_cache(maxsize=256)
def _tool_rule(given: tuple[str, ...]) -> tuple[_Rule, ...]:
    """The ``tool_name`` rule of these names (a configuration's tools: the same few sets recur)."""
    names = sorted({name for name in given if name}, key=lambda name: (-len(name), name))
    if not names:
        return ()
    alternatives = "|".join(re.escape(name) for name in names)
    pattern = re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w-])", _I)
    lowered = tuple(name.lower() for name in names)
    return (_Rule("tool_name", _LOW, pattern, lowered, "", lowered),)


def _spans(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    for match in pattern.finditer(text):
        if match.end() > match.start():
            yield match.span()


def _normalise(text: str, *, origins: bool = True) -> tuple[str, Sequence[int]]:
    """NFKC per character with zero-width characters dropped; ``origin[i]`` is the index in ``text``
    of the character that produced normalised character ``i`` (left empty when not ``origins``).
    ASCII text is its own normal form."""
    if text.isascii():
        return text, range(len(text))
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char in _ZERO_WIDTH:
            continue
        folded = unicodedata.normalize("NFKC", char) if ord(char) > 127 else char
        pieces.append(folded)
        if origins:
            origin.extend([index] * len(folded))
    return "".join(pieces), origin


def _excerpt(text: str, start: int, end: int, secrets: list[Finding]) -> str:
    """Up to EXCERPT_LIMIT characters of the match, with the secrets found in the whole ``text``
    replaced by their placeholders (a fragment alone could hide a secret's context)."""
    pieces: list[str] = []
    cursor = start
    for secret in secrets:
        if secret.end <= start or secret.start >= end:
            continue
        pieces.append(text[cursor : max(cursor, secret.start)])
        pieces.append(placeholder(secret.kind))
        cursor = max(cursor, secret.end)
    pieces.append(text[cursor:end] if cursor < end else "")
    return _visible(" ".join("".join(pieces).split()))


def _visible(excerpt: str) -> str:
    """Invisible characters spelled out (an excerpt of a zero-width run is otherwise empty), capped."""
    visible = "".join(c if c.isprintable() else f"<U+{ord(c):04X}>" for c in excerpt)
    return visible if len(visible) <= EXCERPT_LIMIT else visible[: EXCERPT_LIMIT - 1] + "…"


def _deduplicated(findings: list[InjectionFinding]) -> Iterator[InjectionFinding]:
    """One finding per (rule, overlapping span): alternative patterns of one rule may match the same
    words; the more severe (sorted first) is kept."""
    last_end: dict[str, int] = {}
    for finding in findings:
        if finding.start < last_end.get(finding.rule, -1):
            continue
        last_end[finding.rule] = finding.end
        yield finding
