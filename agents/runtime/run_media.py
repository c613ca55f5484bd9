"""The images and PDFs of a run's task input: checked when the run is created, kept on the run, read
back for every step (docs/decisions/0042-images-and-files-in-input.md).

A run started with ``messages`` may carry ``image_url`` and ``file`` parts in its first user message,
read into their bytes as a completion's are (``agents/runtime/media.py``). Each is a source of its own
class, named by its place (``messages[0].content[1]``), counted by the estimator and governed at every
step as on a completion (the send request's ``task_input_media``). A modality an active model of the
configuration does not declare is refused when the run is created (a 400, nothing stored or sent);
checking at the first step would fail the run instead.

Stored as it may leave (``AgentRun.conversation["task_input_media"]``): redacted. An image carries no
text we read and is kept as its bytes; a PDF whose text or name held a secret is kept as its redacted
text, as every send would send it (``agents/runtime/redactions.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.runtime.modalities import modalities_required
from agents.runtime.redactions import Redactions
from agents.runtime.request import MediaInput
from catalog.models import LlmModel
from context_assembly.parts import FilePart, ImagePart, TextPart


def run_media_check(media: Sequence[MediaInput], models: Sequence[LlmModel]) -> None:
    """Raise :class:`~agents.errors.ModalityUnsupported` when a part of ``media`` needs a modality one
    of ``models`` does not declare."""
    modalities_required({item.part.modality for item in media if item.part.modality is not None}, models)


def stored_media(media: Sequence[MediaInput], redactions: Redactions) -> list[dict[str, Any]]:
    """``media`` as ``AgentRun.conversation`` keeps it, each part redacted."""
    stored = []
    for item in media:
        part = redactions.part(item.part)
        kept: dict[str, Any] = {"data_class": item.data_class, "identifier": item.identifier}
        if isinstance(part, ImagePart):
            kept |= {"type": "image", "url": part.url, "detail": part.detail}
            kept |= {"width": part.width, "height": part.height}
        elif isinstance(part, FilePart):
            kept |= {"type": "pdf", "data": part.data, "filename": part.filename}
            kept |= {"pages": part.pages, "text": part.text}
        else:
            assert isinstance(part, TextPart)
            kept |= {"type": "text", "text": part.text}
        stored.append(kept)
    return stored


def media_of(stored: Sequence[dict[str, Any]]) -> tuple[MediaInput, ...]:
    """The task input's media as :func:`stored_media` kept them."""
    media = []
    for kept in stored:
        part: Any
        if kept["type"] == "image":
            part = ImagePart(kept["url"], kept["detail"], kept["width"], kept["height"])
        elif kept["type"] == "pdf":
            part = FilePart(kept["data"], kept["filename"], kept["pages"], kept["text"])
        else:
            part = TextPart(kept["text"])
        media.append(MediaInput(part, kept["data_class"], kept["identifier"]))
    return tuple(media)
