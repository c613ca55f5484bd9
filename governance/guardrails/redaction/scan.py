"""Redaction of one text: every source of spans, merged and replaced.

Detection runs on the text as written and, when the text holds invisible characters, compatibility
forms, escapes or HTML character references, once more on its normalised view (``normalise``; on each
of two views when an escape reads two ways), whose findings are mapped back to original spans; then on
what its separated, hex and quoted-printable runs spell (``spelled``). Both only add findings: whatever the text as written yields stays.
"""

from __future__ import annotations

import re

from .assignments import assignment_spans
from .blocks import FULL_LINE, Block, Verdict, base64_blocks, judge
from .catalogue import catalogue_spans, lower_ascii
from .findings import Finding, Redaction
from .library import CANDIDATE_RUN, library_spans
from .normalise import disguised_ascii, normalised_views
from .spans import apply, every_occurrence, merge, occurrences
from .spelled import spelled_spans

Span = tuple[int, int, str]
_ENTROPY = "high_entropy_string"
_BLOCK_KINDS = {Verdict.KEY: "private_key", Verdict.OPAQUE: _ENTROPY}


def detect(text: str, *, known_values: dict[str, str] | None = None) -> list[Finding]:
    """Merged findings for ``text``. ``known_values`` (value → kind) are secrets detected elsewhere in
    the same payload, also removed here. Raises RedactionFailed when the scanner fails."""
    known = known_values or {}
    spans = _spans(text, known)
    spelled = spelled_spans(text)
    for view in normalised_views(text):
        for start, end, kind in _spans(view.text, known, view.soft_starts):
            original_start, original_end = view.original_span(start, end)
            # The entropy rule is the only one a folded string can trip without any token shape.
            if kind != _ENTROPY or disguised_ascii(text[original_start:original_end]):
                spans.append((original_start, original_end, kind))
        # A token spelt out and hidden again (an escaped separator, an invisible one inside).
        spelled.extend(
            (*view.original_span(start, end), kind) for start, end, kind in spelled_spans(view.text)
        )
    # A token spelt out or split once is removed wherever it is written the same way again (a split
    # key quoted once and mentioned bare).
    spans.extend(every_occurrence(text, spelled) if spelled else ())
    return merge(spans)


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by its placeholder. Deterministic and idempotent.

    Cost is linear in the text: about 40 ms per 200 KB of prose, code and config; dense single-line
    payloads (minified JSON full of keys) cost up to ~0.3 s, spent in detect-secrets' own regexes.
    A text holding invisible characters, compatibility forms, escapes or character references (other
    than ``&amp;``, ``&lt;`` and ``&gt;``) is scanned twice.
    Raises RedactionFailed when the scanner fails (the caller refuses the call)."""
    if not text:
        return Redaction(text=text, findings=())
    findings = detect(text)
    return Redaction(text=apply(text, findings), findings=tuple(findings))


def _spans(
    text: str, known: dict[str, str], soft_starts: frozenset[int] = frozenset(), *, depth: int = 0
) -> list[Span]:
    lowered = lower_ascii(text)
    runs = list(CANDIDATE_RUN.finditer(text))
    spans = list(catalogue_spans(text, lowered, soft_starts))
    spans.extend(assignment_spans(text, lowered))
    spans.extend(library_spans(text, lowered, runs))
    spans = _with_blocks(text, runs, spans, depth)
    for value, kind in known.items():
        spans.extend(occurrences(text, value, kind))
    return every_occurrence(text, spans)


def _with_blocks(text: str, runs: list[re.Match[str]], spans: list[Span], depth: int) -> list[Span]:
    """``spans`` plus the base64 blocks that are secrets (key-like, opaque, or decoding to a text that
    holds a secret), minus entropy findings inside ordinary content (an image, a JSON document, a
    certificate). Short blocks are judged only when they hold an entropy finding to reconsider."""
    entropy = [span for span in spans if span[2] == _ENTROPY]
    content: list[Block] = []
    for block in base64_blocks(text, runs, hints=[start for start, _, _ in entropy]):
        if len(block.chars) < FULL_LINE and not _inside_any(entropy, [block]):
            continue
        judgement = judge(block)
        if judgement.verdict is Verdict.TEXT and depth == 0:
            inner = merge(_spans(judgement.text, {}, depth=depth + 1))
            if inner:
                widest = max(inner, key=lambda finding: finding.end - finding.start)
                spans.append((block.start, block.end, widest.kind))
            else:
                content.append(block)
        elif judgement.verdict is Verdict.CONTENT:
            content.append(block)
        elif judgement.verdict in _BLOCK_KINDS:
            spans.append((block.start, block.end, _BLOCK_KINDS[judgement.verdict]))
    return [span for span in spans if not (span[2] == _ENTROPY and _inside(span, content))]


def _inside_any(spans: list[Span], blocks: list[Block]) -> bool:
    return any(_inside(span, blocks) for span in spans)


def _inside(span: Span, blocks: list[Block]) -> bool:
    return any(block.start <= span[0] and span[1] <= block.end for block in blocks)
