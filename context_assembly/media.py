"""What the estimator needs from an image's or a PDF's bytes: the type the bytes really are, an
image's width and height, a PDF's page count and text. Pure functions over bytes; nothing is fetched.

Image sizes come from the formats' headers (PNG's IHDR, GIF's logical screen, JPEG's first
start-of-frame marker, WebP's VP8/VP8L/VP8X chunk), so no imaging library is needed and nothing is
decoded. PDF pages and text are read with ``pypdf``; a PDF it cannot read (encrypted, damaged) is
refused, as the providers refuse it.
"""

from __future__ import annotations

import io
import logging
import struct
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from context_assembly.parts import PDF_MEDIA_TYPE, invalid

logger = logging.getLogger(__name__)

IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MEDIA_TYPES = (*IMAGE_MEDIA_TYPES, PDF_MEDIA_TYPE)

# JPEG start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range.
_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def sniffed_media_type(data: bytes) -> str | None:
    """The media type the bytes open with (one of :data:`MEDIA_TYPES`), else None. The caller's
    declared type is never trusted on its own: it must agree with this."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return PDF_MEDIA_TYPE
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` read from the header of a PNG, GIF, JPEG or WebP image; None when the
    header is missing, truncated or declares a zero size."""
    kind = sniffed_media_type(data)
    size: tuple[int, int] | None = None
    if kind == "image/png" and len(data) >= 24 and data[12:16] == b"IHDR":
        size = struct.unpack(">II", data[16:24])
    elif kind == "image/gif" and len(data) >= 10:
        size = struct.unpack("<HH", data[6:10])
    elif kind == "image/jpeg":
        size = _jpeg_size(data)
    elif kind == "image/webp":
        size = _webp_size(data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in (0x01, *range(0xD0, 0xDA)):  # markers without a length
            position += 2
            continue
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if marker in _SOF_MARKERS:
            if position + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return width, height
        position += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


@dataclass(frozen=True)
class PdfFacts:
    """A PDF's page count and its text, page after page (a blank line between pages)."""

    pages: int
    text: str


def pdf_facts(data: bytes, field_path: str) -> PdfFacts:
    """The page count and text of a PDF. Raises :class:`InvalidMessage` naming ``field_path`` when
    ``pypdf`` cannot read it (encrypted, damaged, no pages)."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise invalid(field_path, "an encrypted PDF is not accepted")
        texts = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError, struct.error) as exc:
        logger.info("pdf_unreadable", extra={"field": field_path, "error": type(exc).__name__})
        raise invalid(field_path, "the PDF cannot be read") from None
    if not texts:
        raise invalid(field_path, "the PDF has no pages")
    return PdfFacts(pages=len(texts), text="\n\n".join(text.strip() for text in texts).strip())
