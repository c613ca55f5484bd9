"""Redaction of a text that arrives in pieces (a streamed reply), without letting through a secret
that is split across pieces.

:class:`StreamRedactor` holds back the shortest tail of what it has received that could still become
part of a secret when more text arrives, and hands on everything before it redacted. Which tail that is
follows from the detectors (``catalogue``, ``assignments``, ``library``, ``blocks``):

1. **A run of non-white-space characters at the end.** Every span a detector reports lies inside one
   run of non-white-space characters (a token), except the shapes listed below: catalogue shapes match
   token characters, assignment values are bare tokens unless quoted, detect-secrets candidates are
   widened to their token run, and the normalised view only removes invisible characters and decodes
   escapes, neither of which is white space as written (an escaped line break is not a line break
   until decoded). So a cut at white space never splits such a span, and the
   trailing run is held until white space follows it. This is the usual holdback: one word (two
   where the word before may start a key split in two, rule 7).
2. **An open PEM or PuTTY block** (``-----BEGIN …``, ``PuTTY-User-Key-File-``) is held from its
   opening until its closing line (``END …``, ``Private-MAC:``) has arrived; a trailing line of dashes
   followed by capitals only (an armour not yet complete) is held too. An armour with a hidden
   character is found in the normalised view, as the detectors find it.
3. **A quoted value after a secret-bearing key** on the current line (``password = "two words``) is
   held from its opening quote until the quote closes; a connection-string password
   (``;Password=…``, which may hold spaces) from its ``=`` until the ``;`` or the line break. A word
   after a password key and a colon (``password: hunter2``) is a password only when it ends its
   clause (the first character after it that is not a blank is the line's end or punctuation), so it
   is handed on only together with that character.
4. **A base64 block that may continue**: lines of 40 or more base64 characters, unpadded, are held while
   the next line could extend the block (the block rule joins full lines), so a private key body wrapped
   over lines is judged whole. A line is read as the detectors read it, in its normalised view (a
   hidden character undone, an escaped line break ending a full line), and the last line without an
   escape or character reference still arriving (``%3``, ``\\u00``, ``\\x4``, ``&#x4``).
5. **The start of a value already found**: once a value is detected it is redacted at every later
   occurrence (as :func:`~governance.guardrails.redaction.redact` does within one text); a trailing
   text that is the beginning of such a value containing white space is held, and an occurrence of
   it is never split by a cut. Only token-like values are searched for again, as within one text.
6. **A token spelt apart** (``spelled``): a trailing run of single characters with white space
   between them (``ghp_ A b C``), with the word before them, and so a trailing word followed by one
   space or tab (single characters may follow it); a trailing run of hex pairs or character codes
   with white space between them, or of CSS escapes each ended by a space (``\\67 \\68 ``); a
   quoted-printable soft line break (``=`` at a line's end, maybe with blanks after it) does not end
   a run of non-white-space characters.
7. **A token split in two, or into string literals** (``spelled.joined_spans``): two runs of token
   characters with one blank or line break between them (a space, a no-break space, U+2028, ...) are
   read as one token when a catalogue shape crosses the split. The run before the last separator is
   held while the run after it is still arriving and a shape may still cross the split
   (``catalogue.may_cross``: partial matching of the catalogue's own patterns, so ``AK``, ``ghp_Ab``
   or ``Now`` are held and ``the`` or ``window`` are not); once the second run has ended, the cut is
   moved back before every pair joined across it, read as written and in the normalised view. A
   chain of string literals (``"AKIA…" "…"``, ``'…' + '…'``) is held from its first literal while a
   join or another literal may still follow: whether its parts join depends on all of them. Prose
   therefore holds back two words where the first may start a key (a vendor prefix or its
   beginning), until the next word rules the key out, and a closed quotation until the next word
   starts; a word that cannot start a key is held no longer than rule 1 holds it.

What is handed on is redacted with the left context it needs: detection runs on the already handed-on
part of the current line (up to :data:`CONTEXT_CHARS` characters) followed by the released text, and
only findings in the released text are applied. Values found earlier in the stream are searched for in
every later piece.

Guarantee (``tests/governance/test_stream_redaction.py`` checks it by cutting texts holding every
canary shape at every position): the concatenation of the pieces handed on equals
:func:`~governance.guardrails.redaction.redact` of the whole text, with one exception that streaming
cannot avoid: a value redacted only because it is *also* found later (a bare token that an assignment
further down reveals) has already been handed on where it first appeared.

**The hold limit.** A held tail longer than :data:`MAX_HOLD_CHARS` (more than the longest span a
detector reports) is handed on, so a client is never starved, but never a part of a possible secret:
what is held is redacted as it stands, except its last run of token characters (where the limit may
have cut a secret), which is replaced whole by ``[REDACTED:possible_secret]``; the characters that
continue that run in later pieces are dropped too, up to the first character that ends a token.

**JSON text** (``StreamRedactor(json_text=True)``, a tool call's arguments): findings are reshaped to
whole characters of string content (``json_text``), so what is handed on joins into valid JSON: an
escape is redacted whole or not at all, an escaped quote is never taken, and the hold limit's run is
string content only, an escape still arriving at the limit staying held.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from .assignments import clause_words
from .catalogue import lower_ascii
from .findings import Finding, placeholder
from .json_text import continuation, in_string_after, json_safe, open_token
from .normalise import normalised_view
from .scan import detect
from .spans import apply, replaceable_everywhere
from .spelled import SPLIT_SEPARATORS, joined_spans, open_chain, open_pair

CONTEXT_CHARS = 1024
MAX_HOLD_CHARS = 65_536
_BASE64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/_\-]{40,}[ \t\r]*")
_BASE64_CHARS = re.compile(r"[ \t]*[A-Za-z0-9+/_\-]*={0,2}[ \t\r]*")
_OPENINGS = re.compile(r"-{4,5} ?BEGIN |PuTTY-User-Key-File-")
# A closing counts once something follows it that cannot extend it.
_CLOSINGS = {
    "-": re.compile(r"-{4,5} ?END [A-Z0-9 ]*?(?:KEY|BLOCK) ?-{4,5}(?=[^-])"),
    "P": re.compile(r"Private-MAC: *[0-9A-Fa-f]+(?=[^0-9A-Fa-f])"),
}
_PARTIAL_ESCAPE = re.compile(
    r"(?:%(?:25)*[0-9A-Fa-f]?"  # a percent-escape
    r"|\\(?:u[0-9A-Fa-f]{0,3}|x[0-9A-Fa-f]?)?"  # a backslash escape
    r"|&(?:#[xX]?[0-9A-Fa-f]{0,7}|[A-Za-z][A-Za-z0-9]{0,31})?)\Z"  # an HTML character reference
)
_SPACE = re.compile(r"\s")
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
POSSIBLE_SECRET = "possible_secret"
_PARTIAL_ARMOUR = re.compile(r"-{4,5} ?[A-Z ]*\Z")
_CONNECTION_PASSWORD = re.compile(r"(?:^|;)[ \t]*(?:password|pwd)[ \t]*=", re.I | re.M)
# A quoted value under a secret-bearing key (the keys ``assignments`` reads), after its separator or,
# for a command-line flag, after white space.
_QUOTED_VALUE = re.compile(
    r"(?:pass|pwd|secret|token|key|credential|contrase)[A-Za-z0-9_.\-]*[\\\"'\]]{0,3}"
    r"(?:[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)\\?([\"'`])",
    re.I,
)


class StreamRedactor:
    """Redacts one streamed text. :meth:`feed` takes the next piece and returns what may be handed
    on now (possibly ``""``); :meth:`finish` returns the rest. Not thread-safe: one per stream.

    ``findings`` are the findings of everything handed on, with spans in the handed-on original text;
    ``max_held`` is the longest tail held back so far (characters), for measuring."""

    def __init__(self, *, json_text: bool = False) -> None:
        self._held = ""
        self._context = ""  # the end of the handed-on original text since the last line break
        self._offset = 0  # characters of original text handed on so far
        self._known: dict[str, str] = {}
        # For JSON text: whether the held text starts inside a string (None: plain text).
        self._in_string: bool | None = False if json_text else None
        self._dropping = False  # a run cut at the hold limit: its continuation is dropped
        self.findings: list[Finding] = []
        self.max_held = 0

    def feed(self, piece: str) -> str:
        self._held += piece
        if self._dropping:
            self._drop_continuation()
        cut = safe_cut(self._held, self._context, self._known)
        if len(self._held) - cut > MAX_HOLD_CHARS:
            self.max_held = max(self.max_held, MAX_HOLD_CHARS)
            return self._release_at_limit()
        self.max_held = max(self.max_held, len(self._held) - cut)
        return self._release(cut)

    def finish(self) -> str:
        return self._release(len(self._held))

    def counts_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(finding.kind for finding in self.findings).items()))

    def _release_at_limit(self) -> str:
        """Everything held, redacted, except its last run of token characters (a secret the limit may
        have cut), replaced whole by a placeholder; what continues it later is dropped."""
        start, end = open_token(self._held, in_string=self._in_string)
        released = self._release(start)
        if end == start:
            return released  # nothing token-like at the end (an escape still arriving stays held)
        run, self._held = self._held[: end - start], self._held[end - start :]
        self.findings.append(Finding(POSSIBLE_SECRET, self._offset, self._offset + len(run)))
        self._pass_over(run)
        self._dropping = True
        return released + placeholder(POSSIBLE_SECRET)

    def _drop_continuation(self) -> None:
        """Drop what continues the run cut at the hold limit; stop dropping at its first end."""
        count = continuation(self._held, in_string=self._in_string)
        if count < len(self._held):
            self._dropping = False
        if count:
            dropped, self._held = self._held[:count], self._held[count:]
            last = self.findings[-1]
            self.findings[-1] = Finding(last.kind, last.start, last.end + count)
            self._pass_over(dropped)

    def _pass_over(self, original: str) -> None:
        """Account for ``original`` text handed on as (part of) a placeholder."""
        self._offset += len(original)
        self._context = (self._context + original).rpartition("\n")[2][-CONTEXT_CHARS:]
        if self._in_string is not None:
            self._in_string = in_string_after(original, self._in_string)

    def _release(self, cut: int) -> str:
        if cut <= 0:
            return ""
        segment, self._held = self._held[:cut], self._held[cut:]
        context = self._context
        found: list[Finding] = []
        continued: list[Finding] = []
        for finding in detect(context + segment, known_values=self._known):
            if finding.end <= len(context):
                continue  # already handed on, and handled then
            start, end = finding.start - len(context), finding.end - len(context)
            (found if start >= 0 else continued).append(Finding(finding.kind, max(0, start), end))
        if self._in_string is not None:
            # JSON text: a finding begun before this piece goes on only inside the string it was in.
            continued = json_safe(segment, continued, in_string=True) if self._in_string else []
            found = json_safe(segment, found, in_string=self._in_string)
            self._in_string = in_string_after(segment, self._in_string)
        for finding in found:
            value = segment[finding.start : finding.end]
            if replaceable_everywhere(value):  # as within one text: not a blank or a short word
                self._known.setdefault(value, finding.kind)
        found = sorted(continued + found, key=lambda finding: finding.start)
        self.findings += [Finding(f.kind, f.start + self._offset, f.end + self._offset) for f in found]
        self._offset += len(segment)
        line = (context + segment).rpartition("\n")
        self._context = (line[2] if line[1] else context + segment)[-CONTEXT_CHARS:]
        return apply(segment, found)


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
    text = context + held
    if cut == 0:
        return cut
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
    view = normalised_view(held)
    if view is not None:
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
    view = normalised_view(held)
    if view is None and held[cut - 1] not in SPLIT_SEPARATORS and not ("'" in held or '"' in held):
        return cut  # no pair ends at the cut and no literal: nothing joined can cross it
    spans = [(start, end) for start, end, _ in joined_spans(held)]
    if view is not None:
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
    """After the last white space of ``held`` that is not a quoted-printable soft line break."""
    for index in range(len(held) - 1, -1, -1):
        if held[index].isspace() and not _soft_line_break(held, index):
            return index + 1
    return 0


def _soft_line_break(held: str, index: int) -> bool:
    """Whether ``held[index]`` belongs to a quoted-printable soft line break inside a token: ``=`` after
    a character that is neither white space nor ``=`` (base64 padding ``==``) at a line's end, the next
    line not starting with white space or an armour's dashes once it has arrived."""
    if held[index] in " \t":
        # Blanks after an "=" (which RFC 2045 tells a decoder to strip): the soft line break they may
        # belong to is still arriving, or has arrived and is judged by its line break.
        before = index
        while before > 0 and held[before - 1] in " \t":
            before -= 1
        if before < 2 or held[before - 1] != "=" or held[before - 2].isspace() or held[before - 2] == "=":
            return False
        after = index
        while after < len(held) and held[after] in " \t":
            after += 1
        return after == len(held) or (held[after] in "\r\n" and _soft_line_break(held, after))
    if held[index] == "\r":
        return held[index + 1 : index + 2] == "\n" and _soft_line_break(held, index + 1)
    if held[index] != "\n":
        return False
    equals = index - 2 if held[index - 1 : index] == "\r" else index - 1
    while equals > 0 and held[equals] in " \t":
        equals -= 1
    if equals < 1 or held[equals] != "=" or held[equals - 1].isspace() or held[equals - 1] == "=":
        return False
    following = held[index + 1 : index + 6]
    return not following or not (following[0].isspace() or following.startswith("-----"))


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
    view = normalised_view(held)
    return cut if view is None else _outside_blocks_of(view.text, cut, view.original_span)


def _outside_blocks_of(text: str, cut: int, original: Callable[[int, int], tuple[int, int]]) -> int:
    """:func:`_outside_blocks` on ``text``, whose span ``start:end`` is ``original(start, end)`` of the
    held text (``cut`` is in the held text)."""
    for opening in _OPENINGS.finditer(text):
        start = original(opening.start(), opening.end())[0]
        if start >= cut:
            break
        closing = _CLOSINGS[opening.group()[0]].search(text, opening.end())
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
    view = normalised_view(line)
    if view is not None and (start := _open_value_of(view.text)) < len(view.text):
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
    """Where a run of full base64 lines starts that the next line may continue (else ``len(held)``)."""
    lines = held.split("\n")
    # The last line may end in an escape still arriving ("%3", "\\u00", "&#x4"): read without it.
    *full, last = _as_read(_PARTIAL_ESCAPE.sub("", lines[-1]))
    if not (_BASE64_CHARS.fullmatch(last) and all(_BASE64_LINE.fullmatch(part) for part in full)):
        return len(held)
    first = len(lines) - 1
    while first > 0 and all(_BASE64_LINE.fullmatch(part) for part in _as_read(lines[first - 1])):
        first -= 1
    if first == len(lines) - 1 and not full:
        return len(held)
    return sum(len(line) + 1 for line in lines[:first])


def _as_read(line: str) -> list[str]:
    """The lines ``line`` is as the detectors read it: in its normalised view, where a hidden character
    (invisible, fullwidth, escaped) is undone and an escaped line break ends a line; read at a line's
    start, where an escaped indentation hides. ``[line]`` when nothing in it is hidden."""
    view = normalised_view("\n" + line)
    return [line] if view is None else view.text[1:].split("\n")


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
