"""What reached each receiver of one example, and the checks every receiver shares.

A receiver's bytes are kept as a list of strings: the raw text (a request or response body, a log,
a stored row's fields) and every string decoded from it (JSON string values, unescaped HTML), so a
canary or a marker is found whichever escaping carried it.

Canaries are looked for by their secret part and its distinctive substrings: every window of
:data:`WINDOW` characters of every secret of the session's set is kept in one table, and each
receiver's text is scanned against it, as received and as a reader would take it (invisible
characters dropped, percent-escapes decoded), so any leaked run of :data:`WINDOW` characters of any
secret is found wherever it came from and however it was disguised.
"""

from __future__ import annotations

import functools
import html
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.egress.world import CANARIES

WINDOW = 12
_RUN = re.compile(r"[^\s\"'<>,;(){}\[\]`]{" + str(WINDOW) + ",}")
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
MARKER = re.compile(r"mk(?:sys|snip|skd|skb|name|text|input|reply)\d*x")


# Tokens spelt out (issue 26): single characters with one separator between them, hex pairs, decimal
# character codes; and the escapes whose delimiters the scan would stop at (``\u{X}``, CSS ``\X ``). Read back here independently of the redactor's own reading.
_SEPARATED = re.compile(r"(?:\S[ \t\-.,_:;|/*\u00a0])+\S(?=\s|$|[)\]}])")
_HEX = re.compile(r"(?:(?:0[xX])?[0-9A-Fa-f]{2}(?:, ?|[ :;\-])?){12,}")
_CODES = re.compile(r"(?:\d{2,3}(?:, ?| )){11,}\d{2,3}")
_BRACED = re.compile(r"\\+u\{([0-9A-Fa-f]{1,6})\}")
_CSS = re.compile(r"\\+([0-9A-Fa-f]{1,6}) ?")


def spelt_reads(text: str) -> tuple[str, str]:
    """``text`` with every token spelt out read back, twice: digit pairs read first as decimal
    character codes, then first as hex bytes (``35 46 34`` is either; a run that reads as nothing
    printable stays)."""
    text = _BRACED.sub(lambda m: chr(int(m.group(1), 16)), text)
    text = _CSS.sub(
        lambda m: chr(int(m.group(1), 16)) if 0x20 < int(m.group(1), 16) < 0x7F else m.group(), text
    )
    codes_first = _HEX.sub(_hex_read, _CODES.sub(_codes_read, text))
    hex_first = _CODES.sub(_codes_read, _HEX.sub(_hex_read, text))
    return _separated_read(codes_first), _separated_read(hex_first)


def _codes_read(match: re.Match[str]) -> str:
    return "".join(chr(int(code)) for code in re.findall(r"\d+", match.group()))


def _separated_read(text: str) -> str:
    return _SEPARATED.sub(lambda m: m.group()[::2] if len(m.group()) >= 15 else m.group(), text)


def _hex_read(match: re.Match[str]) -> str:
    pairs = re.findall(r"(?:0[xX])?([0-9A-Fa-f]{2})", match.group())
    decoded = bytes.fromhex("".join(pairs)).decode("latin-1")
    return decoded if decoded.isprintable() and decoded.isascii() else match.group()


@functools.cache
def _windows() -> dict[str, str]:
    """Every WINDOW-character substring of every canary's secret, with its kind (windows that span
    a delimiter are left out: the scan never looks at them, and every secret has others)."""
    table: dict[str, str] = {}
    for canary in CANARIES:
        # A spelt-out secret is read back whole with its prefix: alone, its digits may read as
        # another spelling (hex bytes ``35 46`` as character codes).
        spelt = {*spelt_reads(canary.secret), *spelt_reads(canary.value)} - {canary.value}
        for secret in {canary.secret, revealed(canary.secret), *spelt}:
            for i in range(max(1, len(secret) - WINDOW + 1)):
                window = secret[i : i + WINDOW]
                if _RUN.fullmatch(window):
                    table.setdefault(window, canary.kind)
    assert {kind for kind in table.values()} == {c.kind for c in CANARIES}, "a canary has no window"
    return table


def revealed(text: str) -> str:
    """``text`` as a reader would take it: invisible format characters and combining marks dropped, compatibility forms
    (fullwidth letters) folded, percent-escapes decoded (twice, for a value encoded twice)."""
    text = "".join(char for char in _INVISIBLE.sub("", text) if not unicodedata.combining(char))
    text = unicodedata.normalize("NFKC", text)
    return unquote(unquote(text)) if "%" in text else text


def canaries_in(text: str) -> dict[str, list[str]]:
    """The canary kinds found in ``text`` (as received, and :func:`revealed`), each with a few of the
    substrings found.

    Only runs of :data:`WINDOW` or more characters without white space or punctuation that delimits
    (quotes, brackets, commas) are scanned: every secret's windows are such runs, and prose is not.
    """
    found: dict[str, list[str]] = {}
    for view in dict.fromkeys((text, revealed(text), *spelt_reads(text))):
        _scan(view, found)
    return found


def _scan(text: str, found: dict[str, list[str]]) -> None:
    get = _windows().get
    for match in _RUN.finditer(text):
        run = match.group()
        for i in range(len(run) - WINDOW + 1):
            kind = get(run[i : i + WINDOW])
            if kind is not None:
                hits = found.setdefault(kind, [])
                if len(hits) < 3:
                    hits.append(run[i : i + WINDOW])


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, object keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)
    elif value is not None and not isinstance(value, bool | int | float):
        yield str(value)


def json_texts(raw: str) -> list[str]:
    """``raw`` and, when it is JSON, every string inside it."""
    try:
        return [raw, *strings(json.loads(raw))]
    except ValueError:
        return [raw]


def sse_texts(raw: str) -> list[str]:
    """A text/event-stream body and every string of its events' JSON data."""
    texts = [raw]
    for line in raw.splitlines():
        if line.startswith("data: "):
            texts += json_texts(line.removeprefix("data: "))[1:]
    return texts


def html_texts(raw: str) -> list[str]:
    return [raw, html.unescape(raw)]


@dataclass
class Received:
    """One receiver's bytes in one example."""

    label: str
    texts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    def markers(self, candidates: Iterable[str] | None = None) -> set[str]:
        """The marker words found (only those among ``candidates`` when given)."""
        found = set(MARKER.findall(self.text))
        return found if candidates is None else found & set(candidates)


def canary_leaks(received: Iterable[Received]) -> dict[str, dict[str, list[str]]]:
    """For each receiver that got one: the canary kinds it got and a few of the substrings found."""
    received = list(received)
    if not canaries_in("\n".join(receiver.text for receiver in received)):
        return {}
    leaks = {}
    for receiver in received:
        found = canaries_in(receiver.text)
        if found:
            leaks[receiver.label] = found
    return leaks
