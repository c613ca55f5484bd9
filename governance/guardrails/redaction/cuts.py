"""Where a streamed text may be cut: :func:`safe_cut` and its rules, one function per rule (the rules
and the guarantee they serve are stated in :mod:`~governance.guardrails.redaction.streaming`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from .assignments import clause_words, secret_key_before
from .catalogue import lower_ascii
from .escapes import read_escape
from .normalise import normalised_views
from .spelled import SPLIT_SEPARATORS, joined_spans, open_chain, open_pair

_BASE64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/_\-]{40,}[ \t\r]*")
_BASE64_CHARS = re.compile(r"[ \t]*[A-Za-z0-9+/_\-]*={0,2}[ \t\r]*")


def _escapable(literal: str) -> str:
    """A pattern for ``literal`` with any of its printable characters written as a quoted-printable
    escape (``=2D`` for ``-``), as the detectors read an armour (``spelled``)."""
    return "".join(
        re.escape(char) if char == " " else f"(?:{re.escape(char)}|=(?i:{ord(char):02x}))" for char in literal
    )


_OPENINGS = re.compile(
    rf"(?P<pem>(?:{_escapable('-')}){{4,5}} ?{_escapable('BEGIN ')})|(?P<putty>{_escapable('PuTTY-User-Key-File-')})"
)
# A closing counts once something follows it that cannot extend it. One written in escapes is not
# read: the block is held on, at most until the hold limit.
_CLOSINGS = {
    "pem": re.compile(r"-{4,5} ?END [A-Z0-9 ]*?(?:KEY|BLOCK) ?-{4,5}(?=[^-])"),
    "putty": re.compile(r"Private-MAC: *[0-9A-Fa-f]+(?=[^0-9A-Fa-f])"),
}
_PARTIAL_ESCAPE = re.compile(
    r"(?:%(?:25)*[0-9A-Fa-f]?"  # a percent-escape
    r"|\\(?:u[0-9A-Fa-f]{0,3}|x[0-9A-Fa-f]?)?"  # a backslash escape
    r"|&(?:#[xX]?[0-9A-Fa-f]{0,7}|[A-Za-z][A-Za-z0-9]{0,31})?)\Z"  # an HTML character reference
)
_SPACE = re.compile(r"\s")
_CSS_ESCAPE_END = re.compile(r"\\+[0-9A-Fa-f]{1,6}\Z")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_UNIT = r"[A-Za-z0-9_+/=.:~\-]"
_GAP = "[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]"
# Rule 6: a word and a space (single characters set apart may follow), single characters apart with
# the word before them, hex pairs or character codes apart, CSS escapes each ended by a space, at the
# end of the held text; the last character or code of such a run with what follows it up to the next
# white space (a closing bracket: the run may still go on in the next piece as far as we know).
_SPELLED_TAIL = re.compile(
    rf"(?:(?<![A-Za-z0-9])[A-Za-z0-9_]*{_UNIT}(?P<gap>{_GAP})(?:{_UNIT}(?P=gap))*(?:{_UNIT}(?P=gap)?)?"
    rf"|(?<![A-Za-z0-9])[A-Za-z0-9_]*{_UNIT}(?P<end>{_GAP})(?:{_UNIT}(?P=end))+{_UNIT}\S*"
    r"|(?<![0-9A-Za-z])(?:(?:0[xX])?[0-9A-Fa-f]{2},? )+(?:(?:0[xX]?)?[0-9A-Fa-f]{0,2},?|[0-9A-Fa-f]{2}\S*)"
    r"|(?<![\d.])(?:\d{2,3},? )+(?:\d{0,3},?|\d{2,3}\S*)"
    r"|(?:\\+[0-9A-Fa-f]{1,6}[ \t])+\\*[0-9A-Fa-f]{0,6})\Z"
)
_SPELLED_REACH = 4096
# An armour still arriving, its dashes maybe escaped (``=2D``).
_PARTIAL_ARMOUR = re.compile(rf"(?:{_escapable('-')}){{4,5}} ?[A-Z ]*\Z")
_CONNECTION_PASSWORD = re.compile(r"(?:^|;)[ \t]*(?:password|pwd)[ \t]*=", re.I | re.M)
# A quoted value under a secret-bearing key (the keys ``assignments`` reads), after its separator or,
# for a command-line flag, after white space.
_QUOTED_VALUE = re.compile(
    r"(?:pass|pwd|secret|token|key|credential|contrase)[A-Za-z0-9_.\-]*[\\\"'\]]{0,3}"
    r"(?:[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)\\?([\"'`])",
    re.I,
)


def safe_cut(held: str, context: str = "", known: dict[str, str] | None = None) -> int:
    """The length of the longest prefix of ``held`` whose redaction no continuation can change (see the
    module docstring for the rules). ``context`` is the handed-on text of the current line."""
    cut = _after_last_space(held)
    if cut == 0:
        return 0  # no white space held: every rule below only moves the cut back, and not below 0
    cut = min(cut, _open_joined(held))
    cut = _outside_blocks(held, cut)
    line_start = held.rfind("\n") + 1
    line = context + held[line_start:] if line_start == 0 else held[line_start:]
    offset = line_start - (len(context) if line_start == 0 else 0)
    cut = min(cut, max(0, offset + _open_value(line)))
    cut = min(cut, _open_base64(held))
    cut = min(cut, _open_spelled(held))
    for value in known or {}:
        if _SPACE.search(value):
            cut = min(cut, _value_prefix(held, value), _value_around(held, value, cut))
    return _outside_escape(held, _outside_clause(held, context, _outside_joined(held, cut)))


def _outside_clause(held: str, context: str, cut: int) -> int:
    """``cut``, moved back before a word after a password key and a colon when the first character
    after that word that is not a blank, which decides whether it is a password, would not be handed
    on with it (rule 3). ``context`` is the handed-on text of the current line (it may hold the key)."""
    if cut == 0:
        return cut
    text = context + held
    for start, end in clause_words(text, lower_ascii(text)):
        start, end = start - len(context), end - len(context)
        if start < 0 or start >= cut:
            continue
        decides = end
        while decides < len(held) and held[decides] in " \t":
            decides += 1
        if decides >= cut:
            cut = start
    return cut


def _open_joined(held: str) -> int:
    """Where a token split in two or into string literals may still be arriving (rule 7), read as
    written and, as the detectors read it, in the normalised view; else ``len(held)``. Never inside
    a run of non-white-space characters (rule 1: a soft line break continues one)."""
    start = min(open_pair(held), open_chain(held))
    for view in normalised_views(held):
        in_view = min(open_pair(view.text), open_chain(view.text))
        if in_view < len(view.text):
            start = min(start, view.original_span(in_view, in_view + 1)[0])
    return start if start == len(held) else _after_last_space(held[:start])


def _outside_joined(held: str, cut: int) -> int:
    """``cut``, moved back before a token joined again across it: two runs split by one separator
    (``AK IA…``) or a chain of string literals (``"AKIA…" "…"``), whole once their last part has
    arrived, must not be handed on in two releases."""
    if not 0 < cut < len(held):
        return cut
    views = normalised_views(held)
    if not views and held[cut - 1] not in SPLIT_SEPARATORS and not ("'" in held or '"' in held):
        return cut  # no pair ends at the cut and no literal: nothing joined can cross it
    spans = [(start, end) for start, end, _ in joined_spans(held)]
    for view in views:
        spans += [view.original_span(start, end) for start, end, _ in joined_spans(view.text)]
    for start, end in sorted(spans, key=lambda span: -span[1]):
        if start < cut < end:
            cut = start
    return cut


def _outside_escape(held: str, cut: int) -> int:
    """``cut``, moved before the backslash of an escape it would split (``\\"`` after a quoted-value
    key): each piece of JSON text handed on must end where no escape is open."""
    backslashes = 0
    while backslashes < cut and held[cut - 1 - backslashes] == "\\":
        backslashes += 1
    return cut - backslashes % 2


def _after_last_space(held: str) -> int:
    """After the last white space of ``held`` that is not a quoted-printable soft line break nor the
    blank that ends a CSS escape."""
    for index in range(len(held) - 1, -1, -1):
        if held[index].isspace() and not _soft_line_break(held, index) and not _ends_escape(held, index):
            return index + 1
    return 0


def _ends_escape(held: str, index: int) -> bool:
    """Whether ``held[index]`` is the blank that ends a CSS escape the detectors read (``\\6e `` as
    ``n``): part of the escape, so the word goes on after it (a JSON key body whose line break is
    written ``\\\\6e `` continues on its next line)."""
    if held[index] not in " \t\n" or held[index - 1 : index] not in _HEX_DIGITS:
        return False
    escape = _CSS_ESCAPE_END.search(held, max(0, index - 16), index)
    return escape is not None and read_escape(escape.group() + held[index], printable=True) is not None


def _soft_line_break(held: str, index: int) -> bool:
    """Whether ``held[index]`` belongs to a quoted-printable soft line break inside a token: ``=`` after
    a character that is neither white space nor base64 padding's first ``=`` at a line's end, the next
    line not starting with white space or an armour's dashes once it has arrived; or to one hidden twice
    as the normalised view reads it (``normalise._BREAK``): before a line break of the token's own
    (``AKIA…=\n\nK5``), or its blanks split from its line break by a second one (``…B= \t=\n\nX``)."""
    if held[index] in " \t":
        # Blanks after an "=" (which RFC 2045 tells a decoder to strip): the soft line break they may
        # belong to is still arriving, or has arrived and is judged by its line break.
        before = index
        while before > 0 and held[before - 1] in " \t":
            before -= 1
        if before < 2 or held[before - 1] != "=" or held[before - 2].isspace() or _padding(held, before - 1):
            return False
        after = index
        while after < len(held) and held[after] in " \t":
            after += 1
        if held[after : after + 1] == "=":  # a second soft line break between the blanks and their break
            after += 1
        return after == len(held) or (held[after] in "\r\n" and _soft_line_break(held, after))
    if held[index] == "\r":
        return held[index + 1 : index + 2] == "\n" and _soft_line_break(held, index + 1)
    if held[index] != "\n":
        return False
    start = index - 1 if held[index - 1 : index] == "\r" else index
    if start > 0 and held[start - 1] == "\n":
        return _soft_line_break(held, start - 1)  # the token's own line break after a soft one
    equals = start - 1
    while equals > 0 and held[equals] in " \t":
        equals -= 1
    if equals < 1 or held[equals] != "=" or _padding(held, equals):
        return False
    following = held[index + 1 : index + 6]
    own = following[1:] if following[:1] == "\n" else following[2:] if following[:2] == "\r\n" else None
    if held[equals - 1].isspace():
        arriving = not following or (own is not None and _token_next(own))
        return arriving and _blanks_of_a_soft_break(held, equals)
    if own is not None:
        return _token_next(own)
    return not following or not (following[0].isspace() or following.startswith("-----"))


def _blanks_of_a_soft_break(held: str, equals: int) -> bool:
    """Whether the "=" at ``equals`` follows the blanks of an earlier soft line break's "="."""
    before = equals
    while before > 0 and held[before - 1] in " \t":
        before -= 1
    return (
        before < equals
        and before >= 2
        and held[before - 1] == "="
        and not held[before - 2].isspace()
        and not _padding(held, before - 1)
    )


def _token_next(line: str) -> bool:
    """Whether ``line`` (what follows a line break, maybe still arriving) may go on with a token."""
    return not line or not (line[0].isspace() or line[0] == "-")


def _padding(held: str, equals: int) -> bool:
    """Whether the "=" at ``equals`` follows another that is base64 padding ("=="), not the "=" of a
    secret-bearing key's assignment (``API_KEY==`` and a soft line break)."""
    return held[equals - 1] == "=" and not secret_key_before(held, equals - 1)


def _open_spelled(held: str) -> int:
    """Where a token spelt apart may still be arriving at the end of ``held`` (rule 6), else
    ``len(held)``."""
    tail = _SPELLED_TAIL.search(held, max(0, len(held) - _SPELLED_REACH))
    if tail is None:
        return len(held)
    start = tail.start()
    while start > 0 and not held[start - 1].isspace():
        start -= 1  # never inside a run of non-white-space characters (rule 1)
    return start


def _outside_blocks(held: str, cut: int) -> int:
    """``cut``, moved back to the start of an armoured block that is still open or that it would split,
    the armour read as written and, when a character of it is hidden, in the normalised view."""
    cut = _outside_blocks_of(held, cut, lambda start, end: (start, end))
    for view in normalised_views(held):
        cut = _outside_blocks_of(view.text, cut, view.original_span)
    return cut


def _outside_blocks_of(text: str, cut: int, original: Callable[[int, int], tuple[int, int]]) -> int:
    """:func:`_outside_blocks` on ``text``, whose span ``start:end`` is ``original(start, end)`` of the
    held text (``cut`` is in the held text)."""
    for opening in _OPENINGS.finditer(text):
        start = original(opening.start(), opening.end())[0]
        if start >= cut:
            break
        closing = _CLOSINGS[str(opening.lastgroup)].search(text, opening.end())
        if closing is None or cut < original(closing.start(), closing.end())[1]:
            return start
    partial = _PARTIAL_ARMOUR.search(text, max(0, len(text) - 64))
    return min(cut, original(partial.start(), partial.end())[0]) if partial else cut


def _open_value(line: str) -> int:
    """Where a value on ``line`` (the current line, no line break) that may still grow across white
    space starts: an unclosed quote after a secret-bearing key, or a connection-string password not
    yet ended by ``;``. ``len(line)`` when there is none. Read as written and, as the detectors read
    it, in the normalised view (a quote written ``&quot;``)."""
    position = _open_value_of(line)
    for view in normalised_views(line):
        if (start := _open_value_of(view.text)) < len(view.text):
            position = min(position, view.original_span(start, start + 1)[0])
    return position


def _open_value_of(line: str) -> int:
    """:func:`_open_value` on ``line`` as it reads. A value whose end has arrived still counts as open
    until white space follows that end: the cut falls after the last white space, so before that it
    would fall inside the value (``"two words`` handed on while ``here"`` is held)."""
    position = len(line)
    for match in _CONNECTION_PASSWORD.finditer(line):
        end = line.find(";", match.end())
        if end < 0 or not _SPACE.search(line, end + 1):
            position = min(position, match.end())
            break
    quoted = next(reversed(list(_QUOTED_VALUE.finditer(line))), None)
    if quoted is not None:
        end = line.find(quoted.group(1), quoted.end())
        if end < 0 or not _SPACE.search(line, end + 1):
            position = min(position, quoted.start(1))
    return position


def _open_base64(held: str) -> int:
    """Where a run of full base64 lines starts that the next line may continue (else ``len(held)``),
    the lines read every way the detectors read them."""
    lines = held.split("\n")
    # The last line may end in an escape still arriving ("%3", "\\u00", "&#x4"): read without it.
    open_readings = [
        full
        for *full, last in _as_read(_PARTIAL_ESCAPE.sub("", lines[-1]))
        if _BASE64_CHARS.fullmatch(last) and all(_BASE64_LINE.fullmatch(part) for part in full)
    ]
    if not open_readings:
        return len(held)
    first = len(lines) - 1
    while first > 0 and any(
        all(_BASE64_LINE.fullmatch(part) for part in reading) for reading in _as_read(lines[first - 1])
    ):
        first -= 1
    if first == len(lines) - 1 and not any(open_readings):
        return len(held)
    return sum(len(line) + 1 for line in lines[:first])


def _as_read(line: str) -> list[list[str]]:
    """The lines ``line`` is as the detectors read it, once per reading: in its normalised views, where
    a hidden character (invisible, fullwidth, escaped) is undone and an escaped line break ends a line;
    read at a line's start, where an escaped indentation hides. ``[[line]]`` when nothing in it is
    hidden."""
    views = normalised_views("\n" + line)
    return [view.text[1:].split("\n") for view in views] or [[line]]


def _value_around(held: str, value: str, cut: int) -> int:
    """The start of an occurrence of ``value`` in ``held`` that ``cut`` would split (else ``cut``)."""
    start = held.find(value, max(0, cut - len(value) + 1))
    return start if 0 <= start < cut else cut


def _value_prefix(held: str, value: str) -> int:
    """Where a trailing beginning of ``value`` starts in ``held`` (else ``len(held)``)."""
    for size in range(min(len(value) - 1, len(held)), 0, -1):
        if held.endswith(value[:size]):
            return len(held) - size
    return len(held)
