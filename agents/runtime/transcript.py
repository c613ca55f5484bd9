"""A run's stored request and transcript, as the seam's types; and its run context."""

from __future__ import annotations

import threading
from collections import OrderedDict

from agents.models import AgentRun, AgentStep, ContextUsageNote, RunMessage, StepStatus
from agents.runtime.plan import SendRequest, model_profile
from context_assembly.assembly import ContextItem, render_tail_note
from context_assembly.messages import Message, ToolCall
from context_assembly.usage import RunContext, UsageValue, usage_from_step
from skills.selectors import skills_in_order


def run_usage(run: AgentRun) -> UsageValue:
    """The last completed step's prompt size: reported, else estimated, else unavailable."""
    last = (
        AgentStep.objects.filter(run=run, status=StepStatus.COMPLETED)
        .order_by("-index")
        .values_list("reported_prompt_tokens", "estimated_prompt_tokens")
        .first()
    )
    return usage_from_step(*(last or (None, None)))


def run_context(run: AgentRun) -> RunContext:
    """The run context handed to steps and tools; ``context_usage`` is read anew at every access."""
    return RunContext(
        run_id=str(run.id), profile=model_profile(run.configuration.model), read_usage=lambda: run_usage(run)
    )


def _message(role: str, content: str, tool_calls: list[dict[str, str]], tool_call_id: str) -> Message:
    return Message(
        role=role,
        content=content,
        tool_calls=tuple(ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in tool_calls),
        tool_call_id=tool_call_id or None,
    )


class TranscriptCache:
    """Runs' transcripts as seam Messages, kept per process between steps.

    Transcript rows are append-only (a position is written once and never changed or removed), so a
    step reads only the rows after the ones it already holds; the same Message objects are reused,
    which keeps their digests and token counts cached too. Bounded LRU over runs; thread-safe.
    """

    def __init__(self, max_runs: int = 256) -> None:
        self._runs: OrderedDict[str, tuple[list[Message], list[str]]] = OrderedDict()
        self._lock = threading.Lock()
        self._max_runs = max_runs

    def read(self, run: AgentRun) -> tuple[tuple[Message, ...], tuple[str, ...]]:
        key = str(run.id)
        with self._lock:
            cached = self._runs.get(key)
            messages, classes = (list(cached[0]), list(cached[1])) if cached else ([], [])
        rows = (
            RunMessage.objects.filter(run=run, position__gte=len(messages))
            .order_by("position")
            .values_list("position", "role", "content", "tool_calls", "tool_call_id", "data_class")
        )
        for position, role, content, tool_calls, tool_call_id, data_class in rows:
            if position != len(messages):
                raise RuntimeError(f"run {key}: transcript position {position} follows {len(messages) - 1}")
            messages.append(_message(role, content, tool_calls, tool_call_id))
            classes.append(data_class)
        with self._lock:
            self._runs[key] = (messages, classes)
            self._runs.move_to_end(key)
            if len(self._runs) > self._max_runs:
                self._runs.popitem(last=False)
        return tuple(messages), tuple(classes)


TRANSCRIPTS = TranscriptCache()


def run_request(run: AgentRun, context: RunContext) -> SendRequest:
    transcript, classes = TRANSCRIPTS.read(run)
    tail_note = None
    if run.configuration.context_usage_note == ContextUsageNote.TAIL:
        tail_note = render_tail_note(context.context_usage)
    return SendRequest(
        task_input=run.input_text,
        input_data_class=run.input_data_class,
        caller_context=tuple(
            ContextItem(item["name"], item["text"], item["data_class"]) for item in run.caller_context
        ),
        transcript=transcript,
        transcript_classes=classes,
        request_skills=tuple(skills_in_order(skill_ids=run.request_skills)),
        tail_note=tail_note,
    )
