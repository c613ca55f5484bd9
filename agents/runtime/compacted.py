"""A run's own transcript as its compaction steps left it (``agents/runtime/compaction.py`` makes them).

Transcript rows are never changed: a compaction is a step of its own kind whose record says what it
replaced, and every later step applies the records to the rows it reads:

* a summary (``summarise``) replaces the run's messages before ``through`` with one assistant message
  holding the summary. Its class is the summary step's label and its receiver class the step's
  receiver label, so the summary is a source like any earlier reply and carries the most sensitive
  class of what it replaced (docs/decisions/0021-compaction-is-a-governed-send.md);
* a clearing (``clear_tool_results``) replaces each listed tool result with a stub naming its tool and
  the tokens cleared. A stub keeps its result's class: clearing never lowers what a step is decided on.

The tail note's compaction line says what the step's context holds in place of the originals, and
that a summary was refused or failed (the fit then drops the oldest turns, as it always did).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agents.models import AgentRun, AgentStep, StepKind, StepStatus
from agents.runtime.request import TranscriptEntry
from context_assembly.messages import Message

SUMMARISE, CLEAR_TOOL_RESULTS = "summarise", "clear_tool_results"


@dataclass(frozen=True)
class CompactionRecord:
    """One compaction step as stored."""

    index: int
    status: str
    error_code: str
    label: str
    receiver_label: str
    model: str | None
    data: dict[str, Any]

    @property
    def strategy(self) -> str:
        return str(self.data.get("strategy", ""))


@dataclass(frozen=True)
class Compacted:
    """The run's own transcript with its compactions applied, and what the tail note says of them."""

    entries: tuple[TranscriptEntry, ...]
    start: int  # the first run message still shown as itself (those before it are summarised)
    summarised: bool  # messages[0] is a summary
    cleared: frozenset[int]  # positions of the tool results shown as stubs
    # The run's last summary attempt after its last summary was refused (by governance, the budget, or
    # the summary model's window): for good, as what refused it stays in the transcript or grows.
    refused: bool
    note: str  # the tail note's compaction lines; "" when there is nothing to say

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(entry.message for entry in self.entries)


def compaction_records(run: AgentRun) -> list[CompactionRecord]:
    """The run's compaction steps in order."""
    rows = (
        AgentStep.objects.filter(run=run, kind=StepKind.COMPACTION)
        .order_by("index")
        .values_list(
            "index", "status", "error_code", "label", "receiver_label", "model__model_id", "compaction"
        )
    )
    return [CompactionRecord(*row[:6], data=row[6] or {}) for row in rows]


def summary_message(through: int, text: str) -> Message:
    return Message(
        role="assistant",
        content=f"Summary of this run's first {through} messages, which it replaces:\n\n{text}",
    )


def cleared_stub(tool: str, tokens: int) -> str:
    return f"[Tool result cleared to save context: {tool} returned {tokens:,} tokens here.]"


def compacted(transcript: Sequence[TranscriptEntry], records: Sequence[CompactionRecord]) -> Compacted:
    """``transcript`` (a run's own rows) with ``records`` applied (see the module docstring)."""
    summary: CompactionRecord | None = None
    failed: CompactionRecord | None = None
    stubs: dict[int, tuple[str, int]] = {}
    for record in records:
        if record.strategy == CLEAR_TOOL_RESULTS and record.status == StepStatus.COMPLETED:
            for item in record.data.get("cleared", []):
                stubs[int(item["position"])] = (str(item["tool"]), int(item["tokens"]))
        elif record.strategy == SUMMARISE:
            if record.status == StepStatus.COMPLETED:
                summary, failed = record, None
            else:
                failed = record
    start = int(summary.data["through"]) if summary is not None else 0
    out: list[TranscriptEntry] = []
    if summary is not None:
        out.append(
            TranscriptEntry(
                summary_message(start, str(summary.data["summary"])),
                summary.label,
                receiver_class=summary.receiver_label,
                observed=bool(summary.data.get("observed")),
            )
        )
    cleared = frozenset(position for position in stubs if start <= position < len(transcript))
    for position in range(start, len(transcript)):
        entry = transcript[position]
        if position in cleared:
            stub = Message(
                role="tool", content=cleared_stub(*stubs[position]), tool_call_id=entry.message.tool_call_id
            )
            entry = replace(entry, message=stub)
        out.append(entry)
    return Compacted(
        entries=tuple(out),
        start=start,
        summarised=summary is not None,
        cleared=cleared,
        refused=failed is not None and failed.status == StepStatus.REFUSED,
        note=_note(summary, failed, cleared, stubs),
    )


def _note(
    summary: CompactionRecord | None,
    failed: CompactionRecord | None,
    cleared: frozenset[int],
    stubs: dict[int, tuple[str, int]],
) -> str:
    lines = []
    if summary is not None:
        lines.append(
            f"Compacted: this run's first {summary.data['through']} messages are replaced by a summary "
            f"written by {summary.model}."
        )
    if cleared:
        tokens = sum(stubs[position][1] for position in cleared)
        lines.append(f"Compacted: {len(cleared)} older tool results cleared ({tokens:,} tokens).")
    if failed is not None:
        what = "was refused" if failed.status == StepStatus.REFUSED else "failed"
        lines.append(
            f"Compaction: a summary by {failed.model} {what} ({failed.error_code}); "
            "the oldest turns are dropped instead."
        )
    return "\n".join(lines)
