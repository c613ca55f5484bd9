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
   until decoded; the blank that ends a CSS escape, ``\\6e ``, belongs to the escape and is no cut).
   So a cut at white space never splits such a span, and the trailing run is held until white space
   follows it. This is the usual holdback: one word (two
   where the word before may start a key split in two, rule 7).
2. **An open PEM or PuTTY block** (``-----BEGIN …``, ``PuTTY-User-Key-File-``) is held from its
   opening until its closing line (``END …``, ``Private-MAC:``) has arrived; a trailing line of dashes
   followed by capitals only (an armour not yet complete) is held too. An armour with a hidden
   character is found in the normalised view, as the detectors find it; one written partly in
   quoted-printable escapes (``=2D=2D…=42=45GIN``) opens a block too (``spelled`` reads it).
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

from collections import Counter

from .cuts import safe_cut
from .findings import Finding, placeholder
from .json_text import continuation, in_string_after, json_safe, open_token
from .scan import detect
from .spans import apply, replaceable_everywhere

CONTEXT_CHARS = 1024
MAX_HOLD_CHARS = 65_536
POSSIBLE_SECRET = "possible_secret"


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
