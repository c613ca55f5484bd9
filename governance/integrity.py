"""The integrity level a source has unless it says otherwise (DESIGN §4, "Content and integrity";
docs/decisions/0040-integrity-labels-and-consequential-tools.md): editor-published material is
trusted, what the caller sends is the caller's, a tool's result is untrusted (a trusted tool's result
says ``trusted``), a skill says its own (trusted only from a reviewed source), and an earlier turn
carries its stored level."""

from __future__ import annotations

from governance.vocabulary import Integrity, SourceKind

KIND_INTEGRITY = {
    SourceKind.SYSTEM_PROMPT: Integrity.TRUSTED,
    SourceKind.SNIPPET: Integrity.TRUSTED,
    SourceKind.SKILL: Integrity.UNTRUSTED,
    SourceKind.CALLER_CONTEXT: Integrity.CALLER,
    SourceKind.TASK_INPUT: Integrity.CALLER,
    SourceKind.TOOL_OUTPUT: Integrity.UNTRUSTED,
    SourceKind.ASSISTANT_TURN: Integrity.UNTRUSTED,
}


def source_integrity(kind: SourceKind, stored: str) -> Integrity:
    """A source's level: ``stored``, else its kind's; an unknown value is ``untrusted``."""
    if not stored:
        return KIND_INTEGRITY.get(kind, Integrity.UNTRUSTED)
    return Integrity.parse(stored)
