"""Whether a text writes the quote of a string literal, or the join between two literals, escaped.

A token split into string literals (``'ghs_…' + '…'``, ``"AKIA…" "…"``) is joined again where the
literals are (``spelled.joined_spans``). Written with a quote escaped (``%27``, ``\\x27``,
``\\u0027``, octal ``\\047``) or fullwidth (``U+FF07``), or with the blank or operator between two literals
percent-escaped (``'%20+ '``), the quote as written ends no literal; the normalised view reads it back
(``normalise``), and :func:`escaped_literal_edge` says when that view is called for.
"""

from __future__ import annotations

import re

# Percent-escapes of a quote (%22, %27) and of what joins two literals (a space, a tab, ``&``, ``|``),
# escaped again as well (a URL inside a URL); backslash escapes of a quote. Each starts with one
# literal character (``\\+`` would not: the engine would try every position), so the engine skips to
# its candidates at C speed.
_PERCENT = re.compile(r"%(?:25)*(?:2[027]|09|26|7[Cc])")
_BACKSLASH_QUOTE = re.compile(r"\\(?:\\*(?:u+00|x)2[27]|\\*04[27])")
_FULLWIDTH_QUOTE = re.compile("[\uff02\uff07]")
_ESCAPED_QUOTE = r"%(?:25)*2[27]|\\+(?:u+00|x)2[27]|\\+04[27]|[\uff02\uff07]"
_CONTENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.:~-")
# A literal opening right after a join, its quote maybe escaped as in JSON text.
_OPENING = re.compile(r"\\?[\"'][A-Za-z0-9_+/=.:~\-]")
# What may still become a join and the next literal at the end of a streamed text (``spelled.open_chain``):
# blanks (a quoted-printable soft line break among them) and an operator arriving (``|`` of ``||``),
# each maybe percent-escaped, then maybe the start of a literal (its quote, maybe escaped or fullwidth,
# and its first characters, the last maybe an escape still arriving: ``"77DP\\0`` of ``\\060``) or
# the start of an escape of a quote, a blank or an operator (``%2``, ``\\x2``, ``\\u00``, ``\\04``) or
# of a soft line break (``=``).
_BLANK = r"(?:\s|%(?:25)*(?:20|09|0[AaDd])|=[ \t]*\r?\n)"
_OPERATOR = r"(?:[+.|&]|%(?:25)*(?:2[BbEe6]|7[Cc])){0,2}"
_QUOTE = rf"(?:\\?[\"']|{_ESCAPED_QUOTE})"
_PARTIAL_ESCAPE = r"(?:=[ \t]*\r?|%(?:25)*[0-9A-Fa-f]?|\\+(?:u+[0-9A-Fa-f]{0,3}|x[0-9A-Fa-f]?|[0-7]{0,2}))"
OPEN_JOIN = re.compile(
    rf"{_BLANK}*{_OPERATOR}{_BLANK}*(?:{_QUOTE}[A-Za-z0-9_+/=.:~\-]*{_PARTIAL_ESCAPE}?|{_PARTIAL_ESCAPE})?"
)


def escaped_literal_edge(text: str) -> bool:
    """Whether ``text`` holds an escaped or fullwidth quote next to a literal's content, or an
    escaped join right after a literal's closing quote or right before its opening one. C-speed
    searches for the escapes; Python work per escape found (``It%27s`` in a URL counts: rare, and it
    costs only the view)."""
    if "%" not in text and "\\" not in text and text.isascii():
        return False  # most of a stream's held texts: no escape and no fullwidth quote
    edges: list[re.Match[str]] = []
    if "%" in text:
        edges.extend(_PERCENT.finditer(text))
    if "\\" in text:
        edges.extend(_BACKSLASH_QUOTE.finditer(text))
    if "\uff02" in text or "\uff07" in text:
        edges.extend(_FULLWIDTH_QUOTE.finditer(text))
    return any(_at_literal(text, edge) for edge in edges)


def _at_literal(text: str, edge: re.Match[str]) -> bool:
    start, end = edge.span()
    if edge.group()[-1] in "27\uff02\uff07":  # a quote
        return text[start - 1 : start] in _CONTENT or text[end : end + 1] in _CONTENT
    return _OPENING.match(text, end) is not None or _after_closing(text, start)


def _after_closing(text: str, position: int) -> bool:
    """Whether a literal's closing quote (maybe escaped by a backslash) ends right at ``position``."""
    if text[position - 1 : position] not in ("'", '"'):
        return False
    position -= 1
    if text[position - 1 : position] == "\\":
        position -= 1
    return text[position - 1 : position] in _CONTENT
