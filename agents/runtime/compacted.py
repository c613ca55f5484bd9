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
from dataclasses import dataclass
from typing import Any

from agents.models import AgentRun, AgentStep, StepKind, StepStatus
from context_assembly.messages import Message

SUMMARISE, CLEAR_TOOL_RESULTS = "summarise", "clear_tool_results"

# Messages, per message its class, per message its receiver label and whether that label is observed.
Transcript = tuple[tuple[Message, ...], tuple[str, ...], tuple[tuple[str, bool], ...]]


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

    messages: tuple[Message, ...]
    classes: tuple[str, ...]
    labels: tuple[tuple[str, bool], ...]
    start: int  # the first run message still shown as itself (those before it are summarised)
    summarised: bool  # messages[0] is a summary
    cleared: frozenset[int]  # positions of the tool results shown as stubs
    # The run's last summary attempt after its last summary was refused (by governance, the budget, or
    # the summary model's window): for good, as what refused it stays in the transcript or grows.
    refused: bool
    note: str  # the tail note's compaction lines; "" when there is nothing to say

    @property
    def transcript(self) -> Transcript:
        return self.messages, self.classes, self.labels


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


def compacted(transcript: Transcript, records: Sequence[CompactionRecord]) -> Compacted:
    """``transcript`` (a run's own rows) with ``records`` applied (see the module docstring)."""
    messages, classes, labels = transcript
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
    out: list[Message] = []
    out_classes: list[str] = []
    out_labels: list[tuple[str, bool]] = []
    if summary is not None:
        out.append(summary_message(start, str(summary.data["summary"])))
        out_classes.append(summary.label)
        out_labels.append((summary.receiver_label, bool(summary.data.get("observed"))))
    cleared = frozenset(position for position in stubs if start <= position < len(messages))
    for position in range(start, len(messages)):
        message = messages[position]
        if position in cleared:
            message = Message(
                role="tool", content=cleared_stub(*stubs[position]), tool_call_id=message.tool_call_id
            )
        out.append(message)
        out_classes.append(classes[position])
        out_labels.append(labels[position] if labels else ("", False))
    return Compacted(
        messages=tuple(out),
        classes=tuple(out_classes),
        labels=tuple(out_labels),
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
