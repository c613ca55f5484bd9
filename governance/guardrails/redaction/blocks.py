"""Base64 blocks: runs of base64, possibly wrapped into lines, judged by what they decode to.

A private key pasted without its PEM armour is still a secret, and ordinary base64 (an image, a JSON
document, a certificate) is still not one. Their characters cannot tell them apart (both are dense,
high-entropy base64), their first decoded bytes can: every private-key container opens with a fixed
structure, and so does every common file format.

**A block** is a run of at least 16 base64 characters (standard or URL-safe alphabet, optional ``=``
padding), continued by the next line (after a line break or the escaped ``\\n`` of a JSON or code
string, and indentation) while the line before is full: at least 40 characters wide, the width of the
first line, unpadded. The next line must be a whole line of the same alphabet, no wider. So PEM bodies
(64 columns), MIME and ``base64`` output (76), single long lines and YAML or JSON embeddings are blocks;
a base64 word in prose is only itself.

**Verdicts**, the first that applies:

1. ``KEY``: the decoded bytes open a private-key container, and the block has at least 64 characters
   (the smallest, an Ed25519 PKCS#8 key). The containers: OpenSSH (``openssh-key-v1\\0``); a DER
   ``SEQUENCE`` whose first element is ``INTEGER 0`` or ``1`` followed by an ``INTEGER`` (PKCS#1 RSA,
   DSA), ``INTEGER 1`` followed by an ``OCTET STRING`` (SEC1 EC), ``INTEGER 0``, ``1`` or ``3`` followed
   by a ``SEQUENCE`` (PKCS#8, PKCS#12), or a ``SEQUENCE`` opening with the OID of a PKCS#5 or PKCS#12
   password-based cipher (encrypted PKCS#8). No public structure opens this way.
2. ``CONTENT``: the bytes open a known file format (images, PDF, archives, fonts, media), another DER
   ``SEQUENCE { SEQUENCE …}`` (certificates, certificate requests, public keys) or an SSH public key.
3. ``TEXT``: the bytes are printable UTF-8 (JSON, XML, a config file, a PEM file): the caller scans
   the decoded text, and the block is a secret exactly when the text holds one.
4. ``OPAQUE``: at least 128 characters with the character entropy of random data (over 5 bits per
   character; random base64 of that length measures 5.3 or more, base64 of small integers 3.5): a key
   body without its header, or another encrypted or random blob.
5. ``OTHER``: the rest, left to the other rules.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import enum
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_RUN = re.compile(r"[A-Za-z0-9+/\-_]+={0,2}")
_STANDARD = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_URL_SAFE = re.compile(r"[A-Za-z0-9\-_]+={0,2}")
_NEXT_STANDARD = re.compile(r"[A-Za-z0-9+/]{4,}={0,2}")
_NEXT_URL_SAFE = re.compile(r"[A-Za-z0-9\-_]{4,}={0,2}")
# A line break as written, or escaped once or more (JSON in a JSON string escapes its "\n" again).
_BREAK = re.compile(r"(?:\r?\n|\\+r\\+n|\\+n)[ \t]*")
_LINE_END = re.compile(r"[ \t]*(?:\Z|[\r\n\\\"'`,;)\]}])")
FULL_LINE = 40  # the narrowest wrapped line, and the shortest single-line run, that can be a key
SHORTEST_RUN = 16
_SMALLEST_KEY = 64
_SMALLEST_OPAQUE = 128
_RANDOM_ENTROPY = 5.0


class Verdict(enum.Enum):
    KEY = "key"
    CONTENT = "content"
    TEXT = "text"
    OPAQUE = "opaque"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Block:
    start: int
    end: int
    chars: str  # the base64 characters, lines joined
    url_safe: bool


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    text: str = ""  # the decoded text of a TEXT block


def base64_blocks(text: str, runs: Sequence[re.Match[str]], hints: Sequence[int] = ()) -> Iterator[Block]:
    """The blocks of ``text`` in order, opened by the ``runs`` (matches of 16 or more base64 and token
    characters, found once per text): those opening with at least 40 characters (every block that can
    be a key), and those of 16 or more that hold one of the ``hints`` (offsets)."""
    ordered_hints = sorted(hints)
    cursor = 0
    for candidate in runs:
        start, end = candidate.span()
        hinted = bisect.bisect_left(ordered_hints, start) < bisect.bisect_left(ordered_hints, end)
        shortest = SHORTEST_RUN if hinted else FULL_LINE
        if end <= cursor or end - start < shortest:
            continue
        for run in _RUN.finditer(text, _after_escape(text, max(cursor, start)), end):
            for first in _first_lines(run, shortest):
                if first.start() >= cursor:
                    block = _block(text, first)
                    cursor = block.end
                    yield block


def _after_escape(text: str, position: int) -> int:
    """``position``, moved past the letter of a JSON escape (``\\n``, ``\\r``, ``\\t``) that a run of
    token characters starts with: in a JSON string, a key body's first line follows its ``\\n``, and
    read with that ``n`` it is one character longer than the lines under it (which the block rule
    then does not join)."""
    if 0 < position < len(text) and text[position - 1] == "\\" and text[position] in "nrt":
        return position + 1
    return position


def _first_lines(run: re.Match[str], shortest: int) -> Iterator[re.Match[str]]:
    """The runs of one alphabet in a run of base64 characters: the whole run when it uses one; else
    the standard-alphabet pieces (``key_MIIE...`` holds a key body after its name)."""
    chars = run.group()
    if "-" not in chars and "_" not in chars:
        pieces = [_STANDARD.match(run.string, run.start(), run.end())]
    elif "+" not in chars and "/" not in chars:
        pieces = [_URL_SAFE.match(run.string, run.start(), run.end())]
    else:
        pieces = list(_STANDARD.finditer(run.string, run.start(), run.end()))
    return (piece for piece in pieces if piece is not None and len(piece.group()) >= shortest)


def _block(text: str, run: re.Match[str]) -> Block:
    """The block opened by ``run``, continued over the following full lines."""
    first = run.group()
    url_safe = _STANDARD.fullmatch(first) is None
    following = _NEXT_URL_SAFE if url_safe else _NEXT_STANDARD
    lines, end = [first], run.end()
    while len(lines[-1]) == len(first) >= FULL_LINE and not lines[-1].endswith("="):
        line_break = _BREAK.match(text, end)
        line = following.match(text, line_break.end()) if line_break else None
        if line is None or len(line.group()) > len(first) or not _LINE_END.match(text, line.end()):
            break
        lines.append(line.group())
        end = line.end()
    return Block(run.start(), end, "".join(lines), url_safe)


def judge(block: Block) -> Judgement:
    data = _decoded(block)
    if data is None:
        return Judgement(Verdict.OTHER)
    if len(block.chars) >= _SMALLEST_KEY and _private_key(data):
        return Judgement(Verdict.KEY)
    if data.startswith(_FILE_SIGNATURES) or data[4:8] == b"ftyp" or _public_der(data) or _ssh_public(data):
        return Judgement(Verdict.CONTENT)
    text = _printable(data)
    if text is not None:
        return Judgement(Verdict.TEXT, text)
    if len(block.chars) >= _SMALLEST_OPAQUE and _entropy(block.chars) > _RANDOM_ENTROPY:
        return Judgement(Verdict.OPAQUE)
    return Judgement(Verdict.OTHER)


def _decoded(block: Block) -> bytes | None:
    body = block.chars.rstrip("=")
    body = body[: len(body) - len(body) % 4 if len(body) % 4 == 1 else len(body)]
    try:
        padded = body + "=" * (-len(body) % 4)
        return base64.b64decode(padded, altchars=b"-_" if block.url_safe else None, validate=True)
    except binascii.Error:
        return None


# --- structures -----------------------------------------------------------------------------------------

_SEQUENCE, _INTEGER, _OCTET_STRING, _OID = 0x30, 0x02, 0x04, 0x06
# What follows the version INTEGER in each private-key container (see the module docstring).
_KEY_SHAPES = {
    (0, _INTEGER),
    (1, _INTEGER),
    (1, _OCTET_STRING),
    (0, _SEQUENCE),
    (1, _SEQUENCE),
    (3, _SEQUENCE),
}
# 1.2.840.113549.1.5 (PKCS#5 password-based encryption) and 1.2.840.113549.1.12.1 (PKCS#12 PBE).
_PBE_ARCS = (bytes.fromhex("2a864886f70d0105"), bytes.fromhex("2a864886f70d010c01"))
_FILE_SIGNATURES = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"RIFF",  # WebP, WAV, AVI
    b"II*\x00",  # TIFF
    b"MM\x00*",
    b"\x00\x00\x01\x00",  # ICO
    b"%PDF-",
    b"PK\x03\x04",  # ZIP, DOCX, XLSX, JAR
    b"\x1f\x8b\x08",  # gzip
    b"BZh",
    b"\xfd7zXZ\x00",
    b"7z\xbc\xaf\x27\x1c",
    b"wOFF",
    b"wOF2",
    b"OTTO",
    b"\x00\x01\x00\x00\x00",  # TrueType
    b"OggS",
    b"ID3",
    b"fLaC",
    b"\x00asm",
)
_SSH_PUBLIC = re.compile(rb"\x00\x00\x00[\x07-\x30](?:ssh-|ecdsa-|sk-)")


def _element(data: bytes, offset: int) -> tuple[int, int, int] | None:
    """(tag, offset of the contents, length) of the DER element at ``offset``, or None."""
    if offset + 2 > len(data):
        return None
    tag, first = data[offset], data[offset + 1]
    if first < 0x80:
        return tag, offset + 2, first
    size = first & 0x7F
    if not 1 <= size <= 3 or offset + 2 + size > len(data):
        return None
    return tag, offset + 2 + size, int.from_bytes(data[offset + 2 : offset + 2 + size], "big")


def _private_key(data: bytes) -> bool:
    if data.startswith(b"openssh-key-v1\x00"):
        return True
    outer = _element(data, 0)
    first = _element(data, outer[1]) if outer and outer[0] == _SEQUENCE and outer[2] >= 40 else None
    if first is None:
        return False
    tag, contents, length = first
    if tag == _INTEGER and length == 1 and contents + 1 < len(data):
        return (data[contents], data[contents + 1]) in _KEY_SHAPES
    if tag == _SEQUENCE:  # EncryptedPrivateKeyInfo: SEQUENCE { AlgorithmIdentifier { OID, ... }, ... }
        oid = _element(data, contents)
        return oid is not None and oid[0] == _OID and data[oid[1] : oid[1] + oid[2]].startswith(_PBE_ARCS)
    return False


def _public_der(data: bytes) -> bool:
    """SEQUENCE { SEQUENCE ...} with a long-form length: certificates, requests, public keys, CRLs."""
    outer = _element(data, 0)
    if outer is None or outer[0] != _SEQUENCE or data[1] < 0x81:
        return False
    inner = _element(data, outer[1])
    return inner is not None and inner[0] == _SEQUENCE


def _ssh_public(data: bytes) -> bool:
    return _SSH_PUBLIC.match(data) is not None


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable() else None


def _entropy(chars: str) -> float:
    counts = Counter(chars)
    return -sum(n / len(chars) * math.log2(n / len(chars)) for n in counts.values())
