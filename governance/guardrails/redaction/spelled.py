"""Secrets spelt out so that no pattern matches them as written, read back and matched as a known shape.

A reader (or a model) reads a token through:

- a separator between every character: ``g h p _ A b …`` (spaces, tabs, no-break and other spaces),
  ``g-h-p-_-A-…``, ``g.h.p…``, ``g,h,p…`` and the like (one separator, the same between every two
  characters), with an ordinary word before or after the spaced part (``ghp_ A b C …``);
- hexadecimal: a run of hex pairs (``6768705f…``), pairs apart (``67 68 70``, ``67:68:70``,
  ``0x67, 0x68``), or decimal character codes (``103, 104, 112``);
- quoted-printable inside a token: ``=XX`` escapes (``ghp=5FAb…``) and soft line breaks (``=`` at a
  line's end, maybe with spaces or tabs after it, joining it to the next), read a short line at a
  time together with the lines after it that hold escapes too, so that a key's armour and body
  escaped across words and lines read as one block;
- split in two by one blank or line break (a space, a tab, a no-break space, a line break, a line or
  paragraph separator): ``AKIA…\u00a0…``, a key wrapped onto the next line. A first part that is a
  token of its own (``ghp_`` and 30 characters) is redacted as such, and the word after the split
  kept: a token followed by a word and a token split near its end read the same;
- split into string literals joined again by the code around them: adjacent literals
  (``"AKIA…" "…"``, Python and C), or literals joined by ``+``, ``.``, ``..``, ``||`` or ``&``.

Each candidate run is decoded and only the catalogue's shapes are looked for in what it spells, so a
run counts only when the result is still a known shape (a list of single letters, a hex digest, a
``PORT=5432`` do not). A finding covers the written span of the characters that spell the shape,
separators and escapes included. Cost: four plain C-speed searches over the text, the exact searches
for candidate runs on the lines those hit, Python work per candidate, and a catalogue pass over each
decoded candidate.
"""

from __future__ import annotations

import bisect
import itertools
import re
import string
from collections.abc import Iterator

from .catalogue import catalogue_spans, lower_ascii, may_cross
from .literals import OPEN_JOIN

Span = tuple[int, int, str]
# One decoded character and the original span it was written in.
_Piece = tuple[str, int, int]

_UNIT = r"[A-Za-z0-9_+/=.:~\-]"
_SEPARATORS = "[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000\\-.,_:;|/*]"
# A word (maybe empty), then at least eight characters each followed by the same separator, then one
# more character and maybe a word: "ghp_ A b C …", "g-h-p-_-…".
_SEPARATED = re.compile(
    rf"(?<![A-Za-z0-9])(?P<head>[A-Za-z0-9_]*)"
    rf"(?P<body>{_UNIT}(?P<sep>{_SEPARATORS})(?:{_UNIT}(?P=sep)){{6,}}{_UNIT})(?P<tail>[A-Za-z0-9_]*)"
)
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])(?:0[xX])?(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Za-z])")
_HEX_PAIRS = re.compile(
    r"(?<![0-9A-Za-z])(?:0[xX])?[0-9A-Fa-f]{2}(?:(?:, ?|[ :;\-])(?:0[xX])?[0-9A-Fa-f]{2}){11,}(?![0-9A-Za-z])"
)
_PAIR = re.compile(r"(?:0[xX])?([0-9A-Fa-f]{2})")
_DECIMAL_CODES = re.compile(r"(?<![\d.])\d{2,3}(?:(?:, ?|[ ;])\d{2,3}){11,}(?![\d.])")
_CODE = re.compile(r"\d{2,3}")
# A soft line break may carry spaces or tabs after its "=": RFC 2045 tells a decoder to strip them.
_QP_ESCAPE = re.compile(r"=(?:[0-9A-Fa-f]{2}|[ \t]*\r?\n)")
_QP_PIECE = re.compile(r"=([0-9A-Fa-f]{2})|=[ \t]*\r?\n|.", re.S)
# What every match of each search above holds, searched first: the exact searches (a backreference,
# lookarounds, counted repeats, five passes over the text) cost several times these, and read only the
# lines these hit (no candidate run crosses a line break). Ordinary text pays four plain scans.
_LINE_FILTERS = (
    re.compile(rf"{_SEPARATORS}{_UNIT}(?P<sep>{_SEPARATORS}){_UNIT}(?P=sep){_UNIT}(?P=sep){_UNIT}(?P=sep)"),
    re.compile(r"[0-9A-Fa-f]{24}"),
    re.compile(r"[0-9A-Fa-f]{2}(?:, ?|[ :;\-])(?:0[xX])?[0-9A-Fa-f]{2}(?:, ?|[ :;\-])"),
    re.compile(r"\d{2,3}(?:, ?|[ ;])\d{2,3}(?:, ?|[ ;])"),
)
_QP_CODED = re.compile(r"=([0-9A-Fa-f]{2})|=[ \t]*\r?\n")
# The rest of a word, soft line breaks included (\S is what str.isspace() is not).
_WORD_REST = re.compile(r"(?:=[ \t]*\r?\n|\S)*")
# The end of a line that a soft line break continues, read backwards from the next line's start.
_SOFT_BREAK_BEFORE = re.compile(r"=[ \t]*\r?\n\Z")
# A token split by one separator: two runs of token characters. Each match takes the first run and the
# separator and looks ahead at the second, so the next match starts at the second run (a run pairs
# with the run before it and the one after it).
_SPLIT_CHARS = r"A-Za-z0-9_+/=.\-"
SPLIT_SEPARATORS = " \t\n\r\u00a0\u2007\u202f\u2028\u2029\u0085"
_SPLIT_PAIR = re.compile(
    rf"(?<![{_SPLIT_CHARS}])(?P<a>[{_SPLIT_CHARS}]+)(?:\r\n|[{SPLIT_SEPARATORS}])"
    rf"(?=(?P<b>[{_SPLIT_CHARS}]+)(?![{_SPLIT_CHARS}]))"
)
_SPLIT_SET = frozenset(string.ascii_letters + string.digits + "_+/=.-")  # _SPLIT_CHARS, as a set
# Every token shape holds a digit, "_", "-" or a capital after its first character: a pair of words
# (most of a prose text's pairs, a capital starting a sentence) is no candidate.
_SPLIT_MARK = re.compile(r"[0-9_\-]|(?<=[A-Za-z0-9_+/=.\-])[A-Z]")
_SPLIT_SHORTEST = 15  # characters: no token shape is shorter
# A string literal of token characters (its quotes maybe escaped, as in JSON text), and what joins two
# literals into one string: nothing but white space, or a concatenation operator.
_LITERAL = re.compile(r"\\?([\"'])([A-Za-z0-9_+/=.:~\-]+)\\?\1")
_LITERAL_JOIN = re.compile(r"\s*(?:\+|\.\.?|\|\||&)?\s*")
_SHORTEST = 12  # characters: no catalogue shape is shorter
_LONGEST_WORD = 4096
# Quoted-printable text keeps its lines short (RFC 2045: 76 characters; RFC 5322: 998 at most): a
# reader decodes such lines whole, so a shape written over words and lines (a key's armour and body)
# is read across them. A longer line is no quoted-printable text: only its words are read.
_QP_LINE = 998
_QP_HEX = re.compile(r"=[0-9A-Fa-f]{2}")


def spelled_spans(text: str) -> list[Span]:
    """Catalogue findings in what the separated, hex, decimal and quoted-printable runs of ``text``
    spell, with original spans. A separated run may or may not take the word before or after it
    ("token g h p …", "ghp_ A b …"): the narrowest reading that spells a shape counts. Then tokens
    split by one separator and tokens split into string literals (:func:`joined_spans`)."""
    spans: list[Span] = []
    for readings in _candidates(text):
        for pieces in readings:
            found = _shapes(pieces) if len(pieces) >= _SHORTEST else []
            if found:
                spans.extend(found)
                break
    spans.extend(joined_spans(text))
    return spans


def joined_spans(text: str) -> list[Span]:
    """Catalogue shapes that only a token's parts joined again form, with original spans covering the
    parts and what split them. A shape must cross a join, and no part may hold a shape of its own
    (a token followed by an ordinary word is that token, not a longer one). The candidates' joined
    texts are searched in one catalogue pass (each on a line of its own, which no token shape
    crosses); the parts of the few that hold a shape across a join, in a second one."""
    candidates = [*_split_pairs(text), *_literal_chains(text)]
    crossing = [
        (index, start, end, kind)
        for index, start, end, kind in _catalogue_lines([_joined(text, parts) for parts in candidates])
        if any(start < join < end for join in _joins(candidates[index]))
    ]
    if not crossing:
        return []
    lines, owners = [], []
    for index in {index for index, _, _, _ in crossing}:
        for part_start, part_end in candidates[index]:
            lines.append(text[part_start:part_end])
            owners.append(index)
    shaped = {owners[line] for line, _, _, _ in _catalogue_lines(lines)}
    return [
        (_original(candidates[index], start), _original(candidates[index], end - 1) + 1, kind)
        for index, start, end, kind in crossing
        if index not in shaped
    ]


# A candidate: the original spans of its parts, in order; what it reads is their texts joined.
_Parts = list[tuple[int, int]]


def _joined(text: str, parts: _Parts) -> str:
    return "".join(text[start:end] for start, end in parts)


def _joins(parts: _Parts) -> list[int]:
    """The offsets in the joined text where one part ends and the next begins."""
    return list(itertools.accumulate(end - start for start, end in parts[:-1]))


def _original(parts: _Parts, position: int) -> int:
    """The original offset of the joined text's character at ``position``."""
    for start, end in parts:
        if position < end - start:
            return start + position
        position -= end - start
    raise ValueError(position)


def _catalogue_lines(lines: list[str]) -> list[tuple[int, int, int, str]]:
    """Catalogue findings in each of ``lines`` (line index, start, end, kind), in one pass."""
    if not lines:
        return []
    joined = "\n".join(lines)
    starts = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
    found = []
    for start, end, kind in catalogue_spans(joined, lower_ascii(joined)):
        line = bisect.bisect_right(starts, start) - 1
        if end <= starts[line] + len(lines[line]):
            found.append((line, start - starts[line], end - starts[line], kind))
    return found


def _split_pairs(text: str) -> Iterator[_Parts]:
    """Two runs of token characters with one separator between them, long enough together for a
    shape and holding a character every shape holds."""
    for match in _SPLIT_PAIR.finditer(text):
        a_start, a_end = match.span("a")
        b_start, b_end = match.span("b")
        if (a_end - a_start) + (b_end - b_start) >= _SPLIT_SHORTEST and (
            _SPLIT_MARK.search(text, a_start + 1, a_end) or _SPLIT_MARK.search(text, b_start + 1, b_end)
        ):
            yield [(a_start, a_end), (b_start, b_end)]


def _literal_chains(text: str) -> Iterator[_Parts]:
    """Runs of two or more string literals joined into one string: their contents."""
    if "'" not in text and '"' not in text:
        return
    chain: list[re.Match[str]] = []
    for literal in _LITERAL.finditer(text):
        if chain and _LITERAL_JOIN.fullmatch(text, chain[-1].end(), literal.start()) is None:
            yield from _chain(chain)
            chain = []
        chain.append(literal)
    yield from _chain(chain)


def open_pair(text: str) -> int:
    """Where a token split by one separator may still be arriving at the end of ``text`` (a stream
    cut there): the start of the run before the last separator, when the run after it has not ended
    (or not begun) and a shape may still cross the split (:func:`may_cross`); else ``len(text)``. A
    run holding a shape of its own is never joined, and so never held."""
    second = len(text)
    while second > 0 and text[second - 1] in _SPLIT_SET:
        second -= 1
    separator = second - 1
    if separator < 0 or text[separator] not in SPLIT_SEPARATORS:
        return len(text)
    if text[separator] == "\n" and text[separator - 1 : separator] == "\r":
        separator -= 1
    first = separator
    while first > 0 and text[first - 1] in _SPLIT_SET:
        first -= 1
    run = text[first:separator]
    if not run or next(catalogue_spans(run, lower_ascii(run)), None) is not None:
        return len(text)
    pair = run + text[second:]
    return first if may_cross(pair, len(run)) else len(text)


def open_chain(text: str) -> int:
    """Where a chain of string literals starts that may still go on at the end of ``text`` (a join or
    the next literal still arriving: ``"AKIA…" + "…``), else ``len(text)``. Whether its parts join
    into a shape depends on every literal of the chain (one holding a shape of its own undoes it)."""
    if "'" not in text and '"' not in text:
        return len(text)
    chain: list[re.Match[str]] = []
    for literal in _LITERAL.finditer(text):
        if chain and _LITERAL_JOIN.fullmatch(text, chain[-1].end(), literal.start()) is None:
            chain = []
        chain.append(literal)
    if chain and OPEN_JOIN.fullmatch(text, chain[-1].end()):
        return chain[0].start()
    return len(text)


def _chain(literals: list[re.Match[str]]) -> Iterator[_Parts]:
    if len(literals) >= 2 and sum(len(literal.group(2)) for literal in literals) >= _SPLIT_SHORTEST:
        yield [literal.span(2) for literal in literals]


def _shapes(pieces: list[_Piece]) -> list[Span]:
    decoded = "".join(char for char, _, _ in pieces)
    return [
        (pieces[start][1], pieces[end - 1][2], kind)
        for start, end, kind in catalogue_spans(decoded, lower_ascii(decoded))
    ]


def _candidates(text: str) -> Iterator[list[list[_Piece]]]:
    separated, hex_runs, hex_pairs, decimal = (_lines(text, line_filter) for line_filter in _LINE_FILTERS)
    for start, end in separated:
        yield from map(_separated, _SEPARATED.finditer(text, start, end))
    for pattern, lines in ((_HEX_RUN, hex_runs), (_HEX_PAIRS, hex_pairs)):
        for start, end in lines:
            yield from ([_codes(match, _PAIR, 16)] for match in pattern.finditer(text, start, end))
    for start, end in decimal:
        yield from ([_codes(match, _CODE, 10)] for match in _DECIMAL_CODES.finditer(text, start, end))
    if "=" in text:
        yield from ([passage] for passage in _quoted_printable_passages(text))


def _lines(text: str, line_filter: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans of the lines of ``text`` where ``line_filter`` matches, in order."""
    lines = []
    hit = line_filter.search(text)
    while hit is not None:
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        lines.append((start, end))
        hit = line_filter.search(text, end + 1)
    return lines


def _separated(match: re.Match[str]) -> list[list[_Piece]]:
    """The readings of a separated run, narrowest first: its single characters alone, then with the
    word it starts in, the word it ends in, or both."""
    string = match.string
    units = [(string[i], i, i + 1) for i in range(match.start("body"), match.end("body"), 2)]
    head = [(string[i], i, i + 1) for i in range(match.start("head"), match.start("body"))]
    tail = [(string[i], i, i + 1) for i in range(match.start("tail"), match.end("tail"))]
    # The first unit ends the word before it, the last one starts the word after it: alone, neither
    # is one of the run's single characters.
    inner = units[1 if head else 0 : -1 if tail else None]
    first, last = units[:1] if head else [], units[-1:] if tail else []
    return [inner, head + first + inner, inner + last + tail, head + first + inner + last + tail]


def _codes(match: re.Match[str], code: re.Pattern[str], base: int) -> list[_Piece]:
    """The characters of a run of character codes, or nothing when one is not printable ASCII."""
    pieces = []
    for part in code.finditer(match.group()):
        value = int(part.group(1) if code.groups else part.group(), base)
        if not 0x20 <= value <= 0x7E:
            return []
        pieces.append((chr(value), match.start() + part.start(), match.start() + part.end()))
    return pieces


def _quoted_printable_passages(text: str) -> Iterator[list[_Piece]]:
    """Each passage holding a quoted-printable escape or soft line break, decoded (an escape of anything
    but printable ASCII is left as written): the short lines holding one, read together (a key's
    armour and body lines), or on a longer line, the word. A soft line break joins a line or a word
    to the next line."""
    end = 0
    for escape in _QP_ESCAPE.finditer(text):
        if escape.start() < end:
            continue  # inside the passage just decoded
        start, end = _qp_passage(text, escape.start())
        # Decoded at C speed first: a passage spelling no shape (most do not) is never split into pieces.
        if _spells_a_new_shape(text[start:end], _QP_CODED.sub(_qp_character, text[start:end])):
            yield _decoded_passage(text, start, end)


def _qp_passage(text: str, position: int) -> tuple[int, int]:
    """The passage read around the escape at ``position``: its line and the lines after it that are
    blank, hold an escape or continue a soft line break (trailing blank lines left out), when its line
    is short; else its word, when not too long (else nothing, up to its end)."""
    start = text.rfind("\n", 0, position) + 1
    end = _line_end(text, position)
    if end - start > _QP_LINE:
        start, end = _word_start(text, position), _word_end(text, position)
        return (start, end) if end - start <= _LONGEST_WORD else (end, end)
    kept = end
    while end < len(text):
        following = _line_end(text, end + 1)
        if _SOFT_BREAK_BEFORE.search(text, max(0, end - 64), end + 1) is not None or (
            following - end - 1 <= _QP_LINE and _QP_HEX.search(text, end + 1, following) is not None
        ):
            kept = following
        elif text[end + 1 : following].strip():
            break
        end = following
    return start, kept


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end < 0 else end


def _spells_a_new_shape(written: str, decoded: str) -> bool:
    """Whether ``decoded`` holds a shape that ``written`` does not show as it stands (one shown is
    found in the text as written already)."""
    return len(decoded) >= _SHORTEST and any(
        decoded[start:end] not in written for start, end, _ in catalogue_spans(decoded, lower_ascii(decoded))
    )


def _qp_character(escape: re.Match[str]) -> str:
    """What :func:`_decoded_passage` reads for an escape or a soft line break, as one string."""
    code = escape.group(1)
    if code is None:
        return ""
    return chr(int(code, 16)) if 0x21 <= int(code, 16) <= 0x7E else escape.group()


def _word_start(text: str, position: int) -> int:
    while position > 0 and not text[position - 1].isspace():
        position -= 1
    soft_break = _SOFT_BREAK_BEFORE.search(text, max(0, position - 64), position)
    if soft_break is not None:
        return _word_start(text, soft_break.start())
    return position


def _word_end(text: str, position: int) -> int:
    match = _WORD_REST.match(text, position)
    return position if match is None else match.end()


def _decoded_passage(text: str, start: int, end: int) -> list[_Piece]:
    pieces = []
    for part in _QP_PIECE.finditer(text, start, end):
        value = part.group(1)
        if value is not None and 0x21 <= int(value, 16) <= 0x7E:
            pieces.append((chr(int(value, 16)), part.start(), part.end()))
        elif part.group().startswith("=") and part.group().endswith("\n"):
            continue  # a soft line break
        else:
            pieces.extend(
                (char, part.start() + i, part.start() + i + 1) for i, char in enumerate(part.group())
            )
    return pieces
