"""Redaction inside JSON text read as it streams (a tool call's arguments), keeping it valid JSON.

A finding on JSON text as written can end between a backslash and the character it escapes, or take
an escaped quote with it (``TOKEN=\\"<token>\\"``): the placeholder would then leave a dangling
backslash or an unescaped quote, and the text would no longer parse. :func:`json_safe` reshapes
findings so that each covers whole characters of string content only: an escape is taken whole or not
at all, an escaped quote never, a delimiting quote or anything outside a string never (the reply's
non-streamed path redacts strings only, too). A finding ends with the first string it reaches into
(a pattern read over the text as written can run on across quotes, into the next key), and is split
where it crosses what it may not take inside that string.

The text arrives in pieces, so the lexer state (inside a string or not) is carried from one piece to
the next by :func:`in_string_after`. Pieces are cut where no escape is open.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .findings import Finding

# An escape (whole, or open at the end of the text), a quote, or a run of anything else.
_LEXEME = re.compile(r'\\u[0-9A-Fa-f]{4}|\\u[0-9A-Fa-f]{0,3}\Z|\\\Z|\\.|"|[^"\\]+', re.S)
# Characters that end a run of token characters: white space and the punctuation around values.
_DELIMITERS = frozenset(" \t\r\n\"'`<>()[]{},;")
# The escapes that stand for one of them (never part of a token).
_DELIMITING_ESCAPES = frozenset(['\\"', "\\n", "\\r", "\\t", "\\\\"])


def _lexemes(text: str, in_string: bool) -> Iterator[tuple[int, int, bool, str]]:
    """``(start, end, inside a string, lexeme)`` for each lexeme of ``text``; a quote is reported
    as outside."""
    for match in _LEXEME.finditer(text):
        lexeme = match.group()
        if lexeme == '"':
            in_string = not in_string
            yield match.start(), match.end(), False, lexeme
        else:
            yield match.start(), match.end(), in_string, lexeme


def in_string_after(text: str, in_string: bool) -> bool:
    """Whether the end of ``text`` is inside a string, given whether its start is."""
    for _, _, _, lexeme in _lexemes(text, in_string):
        if lexeme == '"':
            in_string = not in_string
    return in_string


def json_safe(text: str, findings: list[Finding], *, in_string: bool) -> list[Finding]:
    """``findings`` on ``text`` (a piece of JSON text whose start is ``in_string`` or not) reshaped to
    whole characters of string content: escapes whole, escaped quotes and everything outside strings
    left out."""
    if not findings:
        return findings
    lexemes = list(_lexemes(text, in_string))
    reshaped: list[Finding] = []
    for finding in findings:
        # A piece that is only white space (the blank between the escaped quotes of two adjacent
        # literals a key was split into) is no part of the secret: it stays.
        reshaped.extend(
            piece for piece in _reshaped(finding, lexemes) if not text[piece.start : piece.end].isspace()
        )
    return reshaped


def _first_string(finding: Finding, lexemes: list[tuple[int, int, bool, str]]) -> Finding:
    """``finding`` up to the end of the first string it reaches into: a secret is one string's content,
    and a pattern read over JSON text as written can run on across quotes into keys and values."""
    entered = False
    for lexeme_start, _, inside, lexeme in lexemes:
        if lexeme_start < finding.start:
            entered = inside and lexeme != '"'
            continue
        if lexeme_start >= finding.end:
            break
        if inside:
            entered = True
        elif entered and lexeme == '"':
            return Finding(finding.kind, finding.start, lexeme_start)
    return finding


def _reshaped(finding: Finding, lexemes: list[tuple[int, int, bool, str]]) -> Iterator[Finding]:
    finding = _first_string(finding, lexemes)
    start = end = -1
    for lexeme_start, lexeme_end, inside, lexeme in lexemes:
        if lexeme_end <= finding.start:
            continue
        if lexeme_start >= finding.end:
            break
        if not inside or lexeme == '\\"' or (lexeme[0] == "\\" and not _complete(lexeme)):
            if start >= 0:
                yield Finding(finding.kind, start, end)
            start = end = -1
            continue
        if lexeme[0] == "\\":  # an escape: whole
            piece_start, piece_end = lexeme_start, lexeme_end
        else:
            piece_start, piece_end = max(lexeme_start, finding.start), min(lexeme_end, finding.end)
        start = piece_start if start < 0 else start
        end = piece_end
    if start >= 0:
        yield Finding(finding.kind, start, end)


def open_token(text: str, *, in_string: bool | None) -> tuple[int, int]:
    """Where the run of token characters at the end of ``text`` starts and ends: the part a hold limit
    may have cut a secret in. ``in_string`` is None for plain text, else whether ``text`` starts inside
    a JSON string; then only string content counts, escapes whole, and an escape still open at the end
    is left out (its end is then before ``len(text)``)."""
    if in_string is None:
        start = len(text)
        while start > 0 and text[start - 1] not in _DELIMITERS:
            start -= 1
        return start, len(text)
    lexemes = list(_lexemes(text, in_string))
    end = len(text)
    if lexemes and lexemes[-1][3][0] == "\\" and not _complete(lexemes[-1][3]):
        end = lexemes.pop()[0]
    start = end
    for lexeme_start, lexeme_end, inside, lexeme in reversed(lexemes):
        if not inside or lexeme in _DELIMITING_ESCAPES:
            break
        if lexeme[0] != "\\":
            run = lexeme_end
            while run > lexeme_start and lexeme[run - lexeme_start - 1] not in _DELIMITERS:
                run -= 1
            start = run
            if run > lexeme_start:
                break
            continue
        start = lexeme_start
    return start, end


def continuation(text: str, *, in_string: bool | None) -> int:
    """How many characters at the start of ``text`` continue a run of token characters (as
    :func:`open_token` reads them): what follows a run cut at the hold limit, to be dropped too."""
    if in_string is None:
        index = 0
        while index < len(text) and text[index] not in _DELIMITERS:
            index += 1
        return index
    end = 0
    for lexeme_start, lexeme_end, inside, lexeme in _lexemes(text, in_string):
        if not inside or lexeme in _DELIMITING_ESCAPES:
            return lexeme_start
        if lexeme[0] == "\\":
            if not _complete(lexeme):
                return lexeme_start
            end = lexeme_end
            continue
        for offset, char in enumerate(lexeme):
            if char in _DELIMITERS:
                return lexeme_start + offset
        end = lexeme_end
    return end


def _complete(lexeme: str) -> bool:
    return len(lexeme) >= 2 and (lexeme[1] != "u" or len(lexeme) == 6)
