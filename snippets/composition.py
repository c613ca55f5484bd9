"""The snippet block of the system message, and the classified sources it contributes."""

from __future__ import annotations

from collections.abc import Sequence

from governance.policy import Source
from snippets.models import Snippet


def snippet_block(snippets: Sequence[Snippet]) -> str:
    """``NAME:\\n<text>`` sections separated by a blank line, in selection order. Snippets are
    editor-authored and trusted, so they go to the system role unfenced."""
    return "\n\n".join(f"{snippet.name}:\n{snippet.text.strip()}" for snippet in snippets)


def snippet_sources(snippets: Sequence[Snippet]) -> list[Source]:
    return [snippet.as_source() for snippet in snippets]
