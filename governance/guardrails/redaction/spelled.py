"""Secrets spelt out so that no pattern matches them as written, read back and matched as a known shape.

A reader (or a model) reads a token through:

- a separator between every character: ``g h p _ A b …`` (spaces, tabs, no-break and other spaces),
  ``g-h-p-_-A-…``, ``g.h.p…``, ``g,h,p…`` and the like (one separator, the same between every two
  characters), with an ordinary word before or after the spaced part (``ghp_ A b C …``);
- hexadecimal: a run of hex pairs (``6768705f…``), pairs apart (``67 68 70``, ``67:68:70``,
  ``0x67, 0x68``), or decimal character codes (``103, 104, 112``);
- quoted-printable inside a token: ``=XX`` escapes (``ghp=5FAb…``) and soft line breaks (``=`` at a
  line's end, joining it to the next).

Each candidate run is decoded and only the catalogue's shapes are looked for in what it spells, so a
run counts only when the result is still a known shape (a list of single letters, a hex digest, a
``PORT=5432`` do not). A finding covers the written span of the characters that spell the shape,
separators and escapes included. Cost: four plain C-speed searches over the text, the exact searches
for candidate runs on the lines those hit, Python work per candidate, and a catalogue pass over each
decoded candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .catalogue import catalogue_spans, lower_ascii

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
_QP_ESCAPE = re.compile(r"=(?:[0-9A-Fa-f]{2}|\r?\n)")
_QP_PIECE = re.compile(r"=([0-9A-Fa-f]{2})|=\r?\n|.", re.S)
# What every match of each search above holds, searched first: the exact searches (a backreference,
# lookarounds, counted repeats, five passes over the text) cost several times these, and read only the
# lines these hit (no candidate run crosses a line break). Ordinary text pays four plain scans.
_LINE_FILTERS = (
    re.compile(rf"{_SEPARATORS}{_UNIT}(?P<sep>{_SEPARATORS}){_UNIT}(?P=sep){_UNIT}(?P=sep){_UNIT}(?P=sep)"),
    re.compile(r"[0-9A-Fa-f]{24}"),
    re.compile(r"[0-9A-Fa-f]{2}(?:, ?|[ :;\-])(?:0[xX])?[0-9A-Fa-f]{2}(?:, ?|[ :;\-])"),
    re.compile(r"\d{2,3}(?:, ?|[ ;])\d{2,3}(?:, ?|[ ;])"),
)
_QP_CODED = re.compile(r"=([0-9A-Fa-f]{2})|=\r?\n")
# The rest of a word, soft line breaks included (\S is what str.isspace() is not).
_WORD_REST = re.compile(r"(?:=\r?\n|\S)*")
_SHORTEST = 12  # characters: no catalogue shape is shorter
_LONGEST_WORD = 4096


def spelled_spans(text: str) -> list[Span]:
    """Catalogue findings in what the separated, hex, decimal and quoted-printable runs of ``text``
    spell, with original spans. A separated run may or may not take the word before or after it
    ("token g h p …", "ghp_ A b …"): the narrowest reading that spells a shape counts."""
    spans: list[Span] = []
    for readings in _candidates(text):
        for pieces in readings:
            found = _shapes(pieces) if len(pieces) >= _SHORTEST else []
            if found:
                spans.extend(found)
                break
    return spans


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
        yield from ([word] for word in _quoted_printable_words(text))


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


def _quoted_printable_words(text: str) -> Iterator[list[_Piece]]:
    """Each word holding a quoted-printable escape or soft line break, decoded (an escape of anything
    but printable ASCII is left as written). A soft line break joins a word to the next line's first."""
    end = 0
    for escape in _QP_ESCAPE.finditer(text):
        if escape.start() < end:
            continue  # inside the word just decoded
        start = _word_start(text, escape.start())
        end = _word_end(text, escape.start())
        # Decoded at C speed first: a word spelling no shape (most are) is never split into pieces.
        if end - start <= _LONGEST_WORD and _spells_a_shape(_QP_CODED.sub(_qp_character, text[start:end])):
            yield _decoded_word(text, start, end)


def _spells_a_shape(decoded: str) -> bool:
    return len(decoded) >= _SHORTEST and any(catalogue_spans(decoded, lower_ascii(decoded)))


def _qp_character(escape: re.Match[str]) -> str:
    """What :func:`_decoded_word` reads for an escape or a soft line break, as one string."""
    code = escape.group(1)
    if code is None:
        return ""
    return chr(int(code, 16)) if 0x21 <= int(code, 16) <= 0x7E else escape.group()


def _word_start(text: str, position: int) -> int:
    while position > 0 and not text[position - 1].isspace():
        position -= 1
    if position >= 2 and text[position - 2 : position] == "=\n":
        return _word_start(text, position - 2)
    if position >= 3 and text[position - 3 : position] == "=\r\n":
        return _word_start(text, position - 3)
    return position


def _word_end(text: str, position: int) -> int:
    match = _WORD_REST.match(text, position)
    return position if match is None else match.end()


def _decoded_word(text: str, start: int, end: int) -> list[_Piece]:
    pieces = []
    for part in _QP_PIECE.finditer(text, start, end):
        value = part.group(1)
        if value is not None and 0x21 <= int(value, 16) <= 0x7E:
            pieces.append((chr(int(value, 16)), part.start(), part.end()))
        elif part.group() in ("=\n", "=\r\n"):
            continue
        else:
            pieces.extend(
                (char, part.start() + i, part.start() + i + 1) for i, char in enumerate(part.group())
            )
    return pieces
