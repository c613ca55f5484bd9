"""What one backslash escape, ``%uXXXX`` or HTML character reference stands for in the normalised view
(``normalise``), in every syntax a reader decodes, and the escapes that read two ways."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from html.entities import html5

from governance.guardrails.redaction.characters import INVISIBLE, folds_to_token, hiding, in_view

# Escapes of one character, in every syntax a reader decodes: ``\uXXXX`` (JSON, JavaScript, Python,
# Java, which allows ``\uuXXXX``), ``\u{X…}`` (JavaScript, Rust, Swift, PHP, Ruby), ``\UXXXXXXXX``
# (Python, C), ``\xXX`` and ``\x{X…}`` (Python, C, Perl), ``\N{NAME}`` (Python), a JSON surrogate
# pair (``\ud834\udd73``); ``\/`` (JSON); octal ``\NNN`` (C, Python, shell);
# CSS's ``\X…`` (one to six hex digits, one optional white space ending it); ``%uXXXX`` (JavaScript's
# escape(), IIS). Octal takes three octal digits (no more hex digit after them); CSS the rest, an
# octal escape followed by a hex digit included (read both ways: :func:`octal_reading`). A backslash
# escaped again (a JSON string of code) is read as one.
_PAIR = r"\\+u[dD][89abAB][0-9A-Fa-f]{2}\\+u[dD][c-fC-F][0-9A-Fa-f]{2}"  # UTF-16 surrogates
_SURROGATE_PAIR = re.compile(_PAIR)
_UTF16_UNIT = re.compile(r"u([0-9A-Fa-f]{4})")
_LETTER_ESCAPE = (
    _PAIR
    + r"|\\+(?:u+[0-9A-Fa-f]{4}|u\{[0-9A-Fa-f]{1,6}\}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|x\{[0-9A-Fa-f]{1,6}\}"
    r"|N\{[A-Za-z0-9 \-]{1,88}\})"
)
_OCTAL = r"\\+[0-3][0-7]{2}(?![0-9A-Fa-f])"
_OCTAL_ESCAPE = re.compile(_OCTAL)
_OCTAL_DIGITS = re.compile(r"[0-3][0-7]{2}")
BACKSLASH_ESCAPE = _LETTER_ESCAPE + r"|\\/|" + _OCTAL + r"|\\+[0-9A-Fa-f]{1,6}[ \t\n]?|%u[0-9A-Fa-f]{4}"
# HTML character references, numeric (decimal or hexadecimal, the closing semicolon optional as HTML
# parsers read them) or named (closed by their semicolon).
REFERENCE = r"&(?:#[xX][0-9A-Fa-f]{1,6};?|#[0-9]{1,7};?|[A-Za-z][A-Za-z0-9]{1,31};)"
HTML_REFERENCE = re.compile(REFERENCE)
BACKSLASH_ESCAPES = re.compile(BACKSLASH_ESCAPE)


def read_escape(escape: str, *, printable: bool = False) -> str | None:
    """What the view reads for a backslash escape or ``%uXXXX``: the character it stands for when it
    can hide or form a token (a CSS escape: printable ASCII, an invisible character or a compatibility
    form of a token character, never a layout one: ``\\d`` or ``\\a`` in a regular expression or a path
    is no CSS), else None (read as written)."""
    if escape == "\\/":
        return "/"
    body = escape.lstrip("\\")
    # Escapes only code writes (``\uXXXX``, ``\xXX``, octal, CSS) call for the view when they can hide a
    # token; the rarer syntaxes (``\u{X}``, ``\UXXXXXXXX``, ``\N{…}``, ``%uXXXX``) whatever they stand for.
    rare = "{" in body or body[0] in "%UN"
    read = in_view if printable or rare else hiding
    if _SURROGATE_PAIR.fullmatch(escape):
        high, low = (int(code, 16) for code in _UTF16_UNIT.findall(escape))
        return read(chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)))
    if body[0] in "%uUxN":
        char = _letter_escaped(body)
        return None if char is None else read(char)
    if _OCTAL_ESCAPE.fullmatch(escape) and len(body) == 3:
        return read(chr(int(body, 8)))
    char = _character(int(body.rstrip(), 16))
    if char is not None and (" " < char <= "~" or char in INVISIBLE or folds_to_token(char)):
        return char
    return _octal_before_hex(body, read)


def octal_reading(escape: str, read: str | None) -> str | None:
    """The octal reading of an escape read (``read``) as the CSS escape of a character: its first
    three digits as an octal escape of a character the view reads, the rest as written (``\\0602``:
    ``02``), or None when the escape has no such second reading."""
    body = escape.lstrip("\\")
    if read is None or len(body) < 4 or body[0] not in "0123":
        return None  # the common case, decided without a search: no CSS escape of four digits or more
    octal = _octal_before_hex(body, in_view)
    return None if octal == read else octal


def _octal_before_hex(body: str, read: Callable[[str], str | None]) -> str | None:
    """An octal escape followed by a hex letter or digit (``\\111A`` in ``\\101\\113\\111AY0…``)
    read as the octal escape and the rest as written, as C and a shell do: the only reading when the
    CSS escape it also is stands for a character that hides nothing, the second one when that
    character hides (:func:`octal_reading`)."""
    digits = body.rstrip()
    if len(digits) < 4 or not _OCTAL_DIGITS.fullmatch(digits[:3]):
        return None
    char = read(chr(int(digits[:3], 8)))
    return None if char is None else char + body[3:]


def _letter_escaped(body: str) -> str | None:
    """The character of ``uXXXX``, ``u{X}``, ``UXXXXXXXX``, ``xXX``, ``x{X}``, ``N{NAME}``, ``%uXXXX``."""
    if body[0] == "N":
        try:
            return unicodedata.lookup(body[2:-1])
        except KeyError:
            return None
    digits = body.lstrip("%uUx").strip("{}")
    return _character(int(digits, 16))


def _character(code: int) -> str | None:
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else None


def reference_view(reference: str) -> str | None:
    """What the view reads for an HTML character reference (``&#65;``, ``&#x41;``, ``&colon;``): the
    character it stands for when :func:`in_view` keeps it, else None (the reference stays as written)."""
    if reference[1] != "#":
        return _NAMED.get(reference[1:])
    digits = reference.rstrip(";")
    char = _character(int(digits[3:], 16) if digits[2] in "xX" else int(digits[2:]))
    return None if char is None else in_view(char)


# The named references the view reads (a few hundred of HTML's 2,000): those of one character that
# in_view keeps.
_NAMED = {
    name: value for name, value in html5.items() if name.endswith(";") and len(value) == 1 and in_view(value)
}
