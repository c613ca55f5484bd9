"""The content parts of a chat message: text, an image, a file (a PDF), as they cross the seam.

Every part is a frozen, hashable dataclass validated on construction, with ``to_openai()`` (the Chat
Completions wire shape). What the estimator needs to count a part and the wire does not carry (an
image's size, a file's page count and extracted text) is kept on the part, never sent: the provider
reads those from the bytes themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from context_assembly.errors import InvalidMessage

IMAGE_DETAILS = ("auto", "low", "high")
# The input modalities a model may declare (``ModelCapabilities.input_modalities``), and the one each
# non-text part needs.
IMAGE = "image"
PDF = "pdf"
MODALITIES = (IMAGE, PDF)
PDF_MEDIA_TYPE = "application/pdf"


def invalid(field_path: str, problem: str) -> InvalidMessage:
    return InvalidMessage(f"{field_path}: {problem}", extra={"field": field_path})


def require_str(value: object, field_path: str, *, allow_empty: bool = True) -> str:
    if not isinstance(value, str):
        raise invalid(field_path, f"expected a string, got {type(value).__name__}")
    if not allow_empty and not value:
        raise invalid(field_path, "must not be empty")
    return value


def _positive_or_none(value: object, field_path: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise invalid(field_path, "must be a positive integer")


@dataclass(frozen=True)
class TextPart:
    """A text content part."""

    text: str

    def __post_init__(self) -> None:
        require_str(self.text, "content.text")

    @property
    def modality(self) -> None:
        return None

    def to_openai(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ImagePart:
    """An image content part (user messages only).

    ``width`` and ``height`` are not sent on the wire; when the caller knows them the estimator charges
    the documented cost of that size, otherwise the documented maximum for the detail level.
    """

    url: str
    detail: str = "auto"
    width: int | None = None
    height: int | None = None

    def __post_init__(self) -> None:
        require_str(self.url, "content.image_url.url", allow_empty=False)
        if self.detail not in IMAGE_DETAILS:
            raise invalid("content.image_url.detail", f"must be one of {', '.join(IMAGE_DETAILS)}")
        for name in ("width", "height"):
            _positive_or_none(getattr(self, name), f"content.image_url.{name}")

    @property
    def modality(self) -> str:
        return IMAGE

    def to_openai(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.url, "detail": self.detail}}


@dataclass(frozen=True)
class FilePart:
    """A PDF document (user messages only), carried as its bytes in base64.

    ``pages`` and ``text`` (the text extracted from it, one page after another) are what the estimator
    counts and what redaction and personal-data screening read; neither is sent. A document whose
    extracted text held a secret is never sent as a file: redaction replaces it by its redacted text
    (``agents/runtime/redactions.py``); nor is one whose personal data is pseudonymized: it is sent as
    its text with placeholders (``agents/runtime/screening.py``).
    """

    data: str
    filename: str
    pages: int
    text: str = ""
    media_type: str = PDF_MEDIA_TYPE

    def __post_init__(self) -> None:
        require_str(self.data, "content.file.file_data", allow_empty=False)
        require_str(self.filename, "content.file.filename", allow_empty=False)
        require_str(self.text, "content.file.text")
        if self.media_type != PDF_MEDIA_TYPE:
            raise invalid("content.file", f"only {PDF_MEDIA_TYPE} documents are accepted")
        _positive_or_none(self.pages, "content.file.pages")
        if self.pages is None:
            raise invalid("content.file.pages", "must be a positive integer")

    @property
    def modality(self) -> str:
        return PDF

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"

    def to_openai(self) -> dict[str, Any]:
        return {"type": "file", "file": {"filename": self.filename, "file_data": self.data_url}}


ContentPart = TextPart | ImagePart | FilePart
MEDIA_PARTS = (ImagePart, FilePart)
