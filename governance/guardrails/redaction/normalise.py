"""A normalised view of a text, for detection only, with the way back to the original offsets.

A secret can be hidden from pattern matching without changing what a reader (or a model) takes from
it: a character a reader skips inside the token (any format character, a variation selector, a
filler or blank), compatibility forms of its letters (fullwidth letters, mathematical bold, ligatures)
or escapes of some or all of it. The view undoes them:

- every character a reader skips is removed (``characters.INVISIBLE``, derived from the Unicode database);
- every other character is replaced by its NFKC form (one character at a time, so each view character
  comes from exactly one original character);
- every ``%XX`` escape of a printable ASCII character (or tab, line feed, carriage return) is decoded,
  an escape escaped again as well (``%2541``, ``%252541``: ``A``; a URL inside a URL is encoded twice);
- every backslash escape (``\\uXXXX``, ``\\u{X}``, ``\\UXXXXXXXX``, ``\\xXX``, ``\\x{X}``,
  ``\\N{NAME}``, octal ``\\NNN``, CSS ``\\X…``, a JSON surrogate pair) and ``%uXXXX`` is read as its
  character: a JSON text (a tool call's arguments, a pasted document) writes ``\\u200b`` where a reader
  of the decoded value sees nothing, and a string literal can spell a whole token as
  ``\\x67\\x68\\x70…``. Escapes common in code (``\\uXXXX``, ``\\xXX``, octal, CSS) call for the view
  only when they stand for a character that can hide or form a token;
- every JSON ``\\/`` is read as ``/``: some JSON encoders (PHP's by default) escape every slash, which
  splits a base64 key, an AWS secret or a webhook URL where a reader of the decoded value sees one;
- every HTML character reference of such a character or of any printable ASCII character is read as
  that character, as percent-escapes are: numeric (``&#65;``, ``&#x41;``, with or without the closing
  semicolon, as HTML parsers read them) or named (``&colon;``, ``&ast;``, ``&NewLine;``,
  ``&ZeroWidthSpace;``, ``&Aopf;``). An HTML page or an e-mail body writes them and a browser, or a
  model, reads the character; as written, their ``&``, ``#`` and ``;`` would also end a value where the
  character they stand for does not. Only the references every HTML text holds (``&amp;``, ``&lt;``,
  ``&gt;``) do not call for the view alone;
- a quoted-printable soft line break inside a token (``=`` at a line's end, maybe with spaces or tabs
  after it, which RFC 2045 tells a decoder to strip) is removed, also right after the ``=`` of a
  secret-bearing key (``API_KEY==``, otherwise base64 padding) and when hidden twice (before a line
  break of the token's own, or split from its line break by a second one);
- a combining mark laid over a token character (a strike-through ``U+0336``, an underline ``U+0332``,
  an acute ``U+0301`` on every letter) is removed: a reader still reads the letters under it. Marks
  over letters of other scripts are left as they are: alone, they do not call for the view.

Some escapes read two ways:

- an octal escape followed by a digit or a hex letter (``\\0602`` in ``…4\\0602W…``, the octal escape
  of ``0`` then ``2``) is also the CSS escape of a character that hides (U+0602, an invisible one),
  which the view would drop with the two characters after the octal digits. Some 25 code points have
  such a twin (U+0600-0605, U+061C, U+070F, U+115F, U+1160, ...);
- an escape behind two backslashes or more of a letter that a backslash makes a line break or a tab
  (``n``, ``r``, ``t``) is an escape escaped again (``\\\\156``, a JSON string of code: ``n``), or a
  JSON ``\\n`` whose ``n`` alone is escaped (``\\`` then ``\\156``): read the first way, the line
  break between two lines of a key body in a JSON string is gone and the body reads as two halves.

Nothing in the escape tells which a writer meant, so a text holding one gets a second view, reading
every such escape the second way (octal and what follows as written; a backslash and the letter);
detection runs on both. Both are rare, so the second view is too.

Detection runs on the view and each finding is mapped back to the original text, so the redacted span
is the original one, escapes and invisible characters included. Building the view costs one pass in
Python over the non-ASCII characters and escapes, and detection on the view a second scan; so
:func:`normalised_views` first decides, with C-speed searches and a little work per distinct non-ASCII
character, whether the text holds anything that can hide a token: an escape, an invisible character, a
compatibility form of a letter, digit or token punctuation. Prose with an ellipsis, a no-break space or
CJK punctuation does not, and pays almost nothing.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from governance.guardrails.redaction.assignments import secret_key_before
from governance.guardrails.redaction.characters import (
    COMBINING,
    INVISIBLE,
    MARKED_TOKEN,
    SPLITTING_BLANKS,
    TOKEN_EXACT,
    folds_to_token,
)
from governance.guardrails.redaction.escapes import (
    BACKSLASH_ESCAPE,
    BACKSLASH_ESCAPES,
    HTML_REFERENCE,
    REFERENCE,
    octal_reading,
    read_escape,
    reference_view,
)
from governance.guardrails.redaction.literals import escaped_literal_edge

# %20-%7E (printable ASCII) and %09, %0A, %0D, after any number of %25 (an escaped '%'). Only escapes
# of token characters (letters, digits, + - . / = _) call for a view: %20 hides no token, nor does a
# %3A that joins no token characters (see _JOINED_COLON). So do escaped line breaks (%0A, %0D) and
# backslashes (%5C, the start of a JSON "\n"), which join the lines of a key block: one of them
# escaped splits the block in two halves that look like neither a key nor an encoded one.
_ESCAPE = r"%(?:25)*(?:[2-6][0-9A-Fa-f]|7[0-9A-Ea-e]|0[9AaDd])"
_TOKEN_ESCAPE = re.compile(r"%(?:25)*(?:3[0-9Dd]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[CcFf]|2[BbDdEeFf]|0[AaDd])")
# An escaped space or tab in a line's indentation splits an indented key block (YAML, a here-document)
# the way an escaped line break does.
_INDENT_ESCAPE = re.compile(r"\n[ \t]*%(?:25)*(?:20|09)")
# A colon joins the parts of some tokens (a Telegram bot token is "<digits>:<secret>"). Escaped or
# fullwidth between two token characters, it calls for a view; the fullwidth colon of CJK prose and the
# escaped one before a space or another escape, do not.
_JOINED_COLON = re.compile(
    r"[0-9A-Za-z_\-](?:%(?:25)*3[Aa]|\uff1a|\\u003[Aa]|\\x3[Aa]|&#0*58;?|&#[xX]0*3[Aa];?|&colon;)[0-9A-Za-z_\-]"
)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# A quoted-printable soft line break: "=" at a line's end, after a token character or a space within
# the line (an encoder breaks wherever the line is full, also right before a token), before a token
# character (not a line of its own, not before an armour's dashes) or before the join and the quote of
# a string literal (``'ghs_…'=\n + '…'``). It joins the two lines. After another "=" it is base64
# padding ("==") unless that "=" ends the name of a secret-bearing key (``API_KEY==\n…``, the
# assignment's "=" then the break: :func:`_breaks`). Hidden twice, it is still one: a soft line break
# before a line break that a token character follows (the break kept a line break of the token's
# own, ``AKIA…=\n\nK5``), or one whose blanks a second soft line break splits from its line break
# (``…OXB= \t=\n\nXaT5``).
_BREAK = (
    r"=(?:[ \t]+=[ \t]*\r?\n|[ \t]*)\r?\n"
    r"(?=[^\s\-]|-(?!---)|[ \t]+(?:[+.|&]{1,2}[ \t]*)?\\?[\"']|\r?\n[^\s\-])"
)
_SOFT_BREAK = r"(?<=[^\r\n])" + _BREAK
_SOFT_BREAKS = re.compile(_SOFT_BREAK)
_SPECIAL = re.compile(
    BACKSLASH_ESCAPE + "|" + _SOFT_BREAK + "|" + _ESCAPE + "|" + REFERENCE + r"|[^\x00-\x7f]+"
)


@dataclass(frozen=True, slots=True)
class _Segment:
    """A piece of the view: ``identity`` pieces are copied character for character from
    ``original_start`` on; the others stand, as a whole, for one original character or escape of
    ``original_length`` characters."""

    view_start: int
    original_start: int
    original_length: int
    identity: bool


@dataclass(frozen=True, slots=True)
class View:
    """The normalised text and the map back. ``soft_starts`` are view offsets right after a removed
    invisible character: a token boundary in the original even when the view joins two words."""

    text: str
    segments: tuple[_Segment, ...]
    soft_starts: frozenset[int]
    view_starts: tuple[int, ...]  # of the segments, for bisection
    original: str

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span holding view characters ``start`` to ``end`` (exclusive), whole
        characters and escapes included, and the combining marks laid over its last character."""
        original_end = self._original(end - 1, last=True)
        while original_end < len(self.original) and self.original[original_end] in COMBINING:
            original_end += 1
        return self._original(start, last=False), original_end

    def _original(self, position: int, *, last: bool) -> int:
        segment = self.segments[bisect.bisect_right(self.view_starts, position) - 1]
        if segment.identity:
            return segment.original_start + position - segment.view_start + (1 if last else 0)
        return segment.original_start + (segment.original_length if last else 0)


def normalised_views(text: str) -> tuple[View, ...]:
    """The views of ``text``: none when nothing in it can hide a token (then no view is built), two
    when an escape in it reads two ways (:func:`octal_reading`), else one. Every finding in any of
    them is a finding in ``text``."""
    if not _calls_for_a_view(text):
        return ()
    builder = _Builder(text)
    view = builder.build()
    if view is None:
        return ()
    if not builder.two_ways:
        return (view,)
    second = _Builder(text, second=True).build()
    return (view,) if second is None else (view, second)


def _calls_for_a_view(text: str) -> bool:
    return bool(
        ("%" in text and _TOKEN_ESCAPE.search(text))
        or _hiding_characters(text)
        or _JOINED_COLON.search(text)
        or escaped_literal_edge(text)
        or ("%" in text and _INDENT_ESCAPE.search(text))
        or (("\\" in text or "%u" in text) and any(map(read_escape, BACKSLASH_ESCAPES.findall(text))))
        or ("=" in text and "\n" in text and _soft_break(text))
        or ("&" in text and any(_calls_for_view(text, m) for m in HTML_REFERENCE.finditer(text)))
    )


def _soft_break(text: str) -> bool:
    return any(_breaks(text, match.start()) for match in _SOFT_BREAKS.finditer(text))


def _breaks(text: str, equals: int) -> bool:
    """Whether the "=" at ``equals``, at a line's end, is a soft line break: not base64 padding."""
    return text[equals - 1] != "=" or secret_key_before(text, equals - 1)


def _calls_for_view(text: str, reference: re.Match[str]) -> bool:
    """Whether an HTML character reference calls for the view: not one that every HTML text holds,
    and a splitting blank (``&nbsp;``, common in prose) only between two token characters."""
    char = reference_view(reference.group())
    if char in _QUIET:
        return False
    if char in SPLITTING_BLANKS:
        before, after = (
            text[reference.start() - 1 : reference.start()],
            text[reference.end() : reference.end() + 1],
        )
        return before != "" and after != "" and before in TOKEN_EXACT and after in TOKEN_EXACT
    return True


def disguised_ascii(text: str) -> bool:
    """Whether every non-ASCII character of ``text`` is invisible or the fullwidth form of an ASCII
    character: how a token is disguised. Superscripts, mathematical letters and ligatures in a row
    are notation (a lexer's table of them folds to a random-looking ASCII string)."""
    return text.isascii() or all(
        char in INVISIBLE or char in COMBINING or "\uff01" <= char <= "\uff5e"
        for char in _NON_ASCII.findall(text)
    )


def _hiding_characters(text: str) -> bool:
    """Whether ``text`` has an invisible character or a compatibility form of a token character.
    C-speed searches; Python work only per distinct non-ASCII character."""
    if text.isascii():
        return False
    characters = set(_NON_ASCII.findall(text))
    if not characters.isdisjoint(INVISIBLE):
        return True
    if not characters.isdisjoint(COMBINING) and MARKED_TOKEN.search(text):
        return True
    return not unicodedata.is_normalized("NFKC", text) and any(map(folds_to_token, characters))


# The letters a backslash makes a line break or a tab of (JSON, and most string literals).
_LAYOUT_LETTERS = frozenset("nrt")

# What the references every HTML text holds stand for; alone, they do not call for the view.
_QUIET = frozenset({None, "&", "<", ">"})


class _Builder:
    """Builds the view of ``text``; ``second``: read each escape that reads two ways the second way
    (module docstring). ``two_ways`` tells, after :meth:`build`, whether it met such an escape."""

    def __init__(self, text: str, *, second: bool = False) -> None:
        self.text = text
        self.second = second
        self.two_ways = False
        self.pieces: list[str] = []
        self.segments: list[_Segment] = []
        self.soft_starts: set[int] = set()
        self.length = 0  # of the view so far
        self.changed = False

    def build(self) -> View | None:
        cursor = 0
        for match in _SPECIAL.finditer(self.text):
            self._copy(cursor, match.start())
            special = match.group()
            if special[0] == "=" and not _breaks(self.text, match.start()):
                self._copy(match.start(), match.end())  # base64 padding at a line's end
            elif special[0] == "=":
                self.changed = True  # a soft line break: the two lines read as one word
            elif special[0] == "\\" or special.startswith("%u"):
                self._escaped(match.start(), special, self._read(special))
            elif special[0] == "%":
                self._replace(match.start(), len(special), chr(int(special[-2:], 16)))
            elif special[0] == "&":
                self._escaped(match.start(), special, reference_view(special))
            elif (
                INVISIBLE.isdisjoint(special)
                and COMBINING.isdisjoint(special)
                and unicodedata.is_normalized("NFKC", special)
            ):
                self._copy(match.start(), match.end())
            else:
                for offset, char in enumerate(special, start=match.start()):
                    self._character(offset, char)
            cursor = match.end()
        self._copy(cursor, len(self.text))
        if not self.changed:
            return None
        return View(
            text="".join(self.pieces),
            segments=tuple(self.segments),
            soft_starts=frozenset(self.soft_starts),
            view_starts=tuple(segment.view_start for segment in self.segments),
            original=self.text,
        )

    def _read(self, escape: str) -> str | None:
        read = read_escape(escape, printable=True)
        other = octal_reading(escape, read)
        if other is None and read and read[0] in _LAYOUT_LETTERS and escape.startswith("\\\\"):
            other = "\\" + read  # the letter of a JSON "\n" escaped on its own (and digits after it)
        if other is None:
            return read
        self.two_ways = True
        return other if self.second else read

    def _character(self, offset: int, char: str) -> None:
        if char in INVISIBLE:
            self.changed = True
            self.soft_starts.add(self.length)
            return
        if char in COMBINING and self._after_token_character():
            self.changed = True  # read as the character under it; the word goes on
            return
        normal = unicodedata.normalize("NFKC", char)
        if normal == char:
            self._copy(offset, offset + 1)
        else:
            self._replace(offset, 1, normal)

    def _escaped(self, offset: int, escape: str, char: str | None) -> None:
        """A backslash escape or an HTML reference read as ``char`` (an invisible one is dropped), or
        as written when ``char`` is None."""
        if char is None:
            self._copy(offset, offset + len(escape))
        elif char in INVISIBLE:
            self.changed = True
            self.soft_starts.add(self.length)
        elif char in COMBINING and self._after_token_character():
            self.changed = True
        else:
            self._replace(offset, len(escape), unicodedata.normalize("NFKC", char))

    def _after_token_character(self) -> bool:
        """Whether the view so far ends in an ASCII token character (a mark's base)."""
        last = self.pieces[-1][-1:] if self.pieces else ""
        return last != "" and last in TOKEN_EXACT

    def _copy(self, start: int, end: int) -> None:
        if start == end:
            return
        last = self.segments[-1] if self.segments else None
        contiguous = (
            last is not None
            and last.identity
            and last.original_start + (self.length - last.view_start) == start
        )
        if not contiguous:
            self.segments.append(_Segment(self.length, start, 0, identity=True))
        self.pieces.append(self.text[start:end])
        self.length += end - start

    def _replace(self, start: int, length: int, normal: str) -> None:
        self.changed = True
        if normal:
            self.segments.append(_Segment(self.length, start, length, identity=False))
            self.pieces.append(normal)
            self.length += len(normal)
