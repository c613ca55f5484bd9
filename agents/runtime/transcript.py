"""A run's next send built top to bottom (:func:`run_send`): its stored request and transcript, as the
seam's types, with its pins and content; and its run context."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db import connections, router

from agents.models import AgentRun, AgentStep, RunMessage, StepKind, StepStatus
from agents.runtime.compacted import compacted, compaction_records
from agents.runtime.content import pinned_send_content
from agents.runtime.pins import PinnedContent, pinned_content, run_pins
from agents.runtime.plan import SendPlan, model_profile, receiver_name, send_plan
from agents.runtime.request import SendRequest, TranscriptEntry
from agents.runtime.run_media import media_of
from catalog.models import ContextStrategy, ContextUsageNote, LlmModel
from catalog.models.sql import Table, converted_rows, executed, statement_cursor
from config.caches import cache_register
from config.lru import LruCache
from context_assembly.assembly import ContextItem, render_tail_note
from context_assembly.messages import Message, ToolCall
from context_assembly.usage import UNAVAILABLE, ContextUsage, RunContext, usage_from_step
from governance.vocabulary import TrustZone
from skills.selectors import skills_in_order


def run_usage(run: AgentRun) -> ContextUsage:
    """The last completed step's prompt size (reported, else estimated) beside the window of the model
    that served that step, as it was then; before any step, unavailable beside the serving model's.
    A compaction step's prompt is its summary's, not the run's context: only model calls count."""
    last = (
        AgentStep.objects.filter(run=run, status=StepStatus.COMPLETED, kind=StepKind.MODEL_CALL)
        .order_by("-index")
        .values_list(
            "reported_prompt_tokens",
            "estimated_prompt_tokens",
            "context_window",
            "model__model_id",
            "model__context_window",
        )
        .first()
    )
    if last is None:
        model = run.configuration.model
        return ContextUsage(
            used_tokens=UNAVAILABLE, context_window=model.context_window, model=model.model_id
        )
    reported, estimated, window, model_id, model_window = last
    return ContextUsage(
        used_tokens=usage_from_step(reported, estimated),
        context_window=window or model_window,
        model=model_id,
    )


def step_usage(step: AgentStep, default: LlmModel) -> ContextUsage:
    """One step's prompt size beside the window of the model it names (``default`` for none)."""
    model = step.model or default
    return ContextUsage(
        used_tokens=usage_from_step(step.reported_prompt_tokens, step.estimated_prompt_tokens),
        context_window=step.context_window or model.context_window,
        model=model.model_id,
    )


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


_WIRE_KEYS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})


class TranscriptCache:
    """Runs' transcripts as seam Messages, kept per process between steps.

    Transcript rows are append-only (a position is written once and never changed or removed), so a
    step reads only the rows after the ones it already holds; the same Message objects are reused,
    which keeps their digests and token counts cached too. Bounded LRU over runs; thread-safe.
    """

    def __init__(self, max_runs: int = 256) -> None:
        self.runs: LruCache[str, tuple[TranscriptEntry, ...]] = LruCache(max_runs)

    def read(self, run: AgentRun, *, stored: int | None = None) -> tuple[TranscriptEntry, ...]:
        """The run's transcript: the entries held, and the rows stored after them. ``stored``: how
        many messages the run has stored, when the caller knows (a step's claim reads it, and the
        lease keeps every other writer out); a transcript held that long is read from nothing, one
        held longer is dropped and read from the first row."""
        key = str(run.id)
        entries = self.runs.get(key) or ()
        if stored is not None and stored == len(entries):
            return entries
        if stored is not None and stored < len(entries):  # held more than is stored: read it all anew
            entries = ()
        rows = _rows_from(run, len(entries))
        added: list[TranscriptEntry] = []
        for (
            position,
            role,
            content,
            tool_calls,
            tool_call_id,
            data_class,
            receiver,
            observed,
            integrity,
        ) in rows:
            if position != len(entries) + len(added):
                held = len(entries) + len(added) - 1
                raise RuntimeError(f"run {key}: transcript position {position} follows {held}")
            message = _message(role, content, tool_calls, tool_call_id)
            added.append(
                TranscriptEntry(
                    message, data_class, receiver_class=receiver, observed=bool(observed), integrity=integrity
                )
            )
        if added:
            entries += tuple(added)
            self.runs.put(key, entries)
        return entries

    def written(self, stored: RunMessage) -> None:
        """Hold ``stored``, a message of the run that its step has just stored, after the run's held
        transcript when that transcript ends right before its position (so the run's next step in
        this worker reads nothing: :meth:`read` with ``stored``); else hold nothing new (the next
        read reads it). Only the worker holding the run's lease writes its messages, so a step's own
        writes are the rows a read would return, as they were stored. Called once the write has
        committed (``transaction.on_commit``): a write rolled back is never held."""
        key = str(stored.run_id)
        entries = self.runs.get(key) or ()
        if stored.position != len(entries):
            return
        message = _message(stored.role, stored.content, stored.tool_calls, stored.tool_call_id)
        entry = TranscriptEntry(
            message,
            str(stored.data_class),
            receiver_class=str(stored.receiver_class),
            observed=bool(stored.label_observed),
            integrity=str(stored.integrity),
        )
        self.runs.put(key, (*entries, entry))


_ROW = (
    "position",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "data_class",
    "receiver_class",
    "label_observed",
    "integrity",
)


def _rows_from(run: AgentRun, position: int) -> list[list[Any]]:
    """The run's messages from ``position`` on, in order, each as :data:`_ROW`'s values: the ORM's
    ``filter(run=run, position__gte=position).order_by("position").values_list(*_ROW)``, as SQL text,
    since building that query cost more than running it, at every step (``catalog/models/sql.py``)."""
    alias = router.db_for_read(RunMessage)
    connection = connections[alias]
    table = Table(RunMessage, connection)
    sql = (
        f"SELECT {', '.join(table[name] for name in _ROW)} FROM {table.name} "
        f"WHERE {table['run']} = %s AND {table['position']} >= %s ORDER BY {table['position']}"
    )
    params: list[Any] = [table.value("run", run.pk), position]
    with statement_cursor(connection) as cursor:
        rows = executed(cursor, sql, params).fetchall()
    return list(converted_rows(connection, alias, [table.field(name) for name in _ROW], rows))


TRANSCRIPTS = TranscriptCache()
cache_register(
    TRANSCRIPTS.runs,
    name="transcripts",
    key="run id",
    invalidation=(
        "none needed: transcript rows are append-only, so a held transcript is a prefix of the stored "
        "one and each read appends the rows after it"
    ),
)


def run_send(run: AgentRun, *, stored_messages: int | None = None) -> tuple[SendRequest, SendPlan]:
    """A run's next send, resolved top to bottom: its pinned versions (a run that pinned them), its
    request and transcript with their labels, the content as pinned (else the live rows), and the
    plan. The step sends it; a compaction fits it to decide whether the step would drop turns.
    ``stored_messages``: the run's stored messages, when the caller knows (``TranscriptCache.read``)."""
    pins = run_pins(run)
    pinned = pinned_content(configuration=run.configuration, pins=pins) if pins else None
    request = run_request(run, run_context(run), pinned, stored_messages=stored_messages)
    content = pinned_send_content(run.configuration, pinned) if pinned is not None else None
    return request, send_plan(configuration=run.configuration, request=request, content=content)


def run_request(
    run: AgentRun,
    context: RunContext,
    pinned: PinnedContent | None = None,
    *,
    stored_messages: int | None = None,
) -> SendRequest:
    """The send of a run's next step: its stored request and, after a conversation's messages (for a
    run started with messages), its own transcript; with ``pinned``, built from the run's pinned
    content. A configuration that compacts has its compactions applied to the run's own transcript
    (``agents/runtime/compacted.py``), and the tail note says what they replaced."""
    transcript = TRANSCRIPTS.read(run, stored=stored_messages)
    lines = []
    compacted_messages = 0
    note = run.configuration.context_usage_note
    if pinned is not None:
        note = pinned.configuration_fields.get("context_usage_note", note)
    if note == ContextUsageNote.TAIL:
        lines.append(render_tail_note(context.context_usage))
    if run.configuration.context_strategy != ContextStrategy.DROP_OLDEST:
        state = compacted(transcript, compaction_records(run))
        compacted_messages = len(transcript) - len(state.entries)
        transcript = state.entries
        lines.append(state.note)
    tail_note = "\n".join(line for line in lines if line) or None
    request = SendRequest(
        task_input=run.input_text,
        input_data_class=run.input_data_class,
        caller_context=tuple(_item(item) for item in run.caller_context),
        transcript=transcript,
        # A pinned run's skills are among its pins: the live rows are not read again.
        request_skills=tuple(skills_in_order(skill_ids=run.request_skills)) if pinned is None else (),
        tail_note=tail_note,
        compacted_messages=compacted_messages,
        receiver_zone=TrustZone.parse(run.receiver_zone),
        receiver_name=receiver_name(run.api_client),
        pseudonym_scope=str(run.id),
    )
    return _with_conversation(request, run.conversation) if run.conversation else request


def _item(stored: dict[str, str]) -> ContextItem:
    return ContextItem(stored["name"], stored["text"], stored["data_class"], stored.get("identifier"))


def _with_conversation(request: SendRequest, conversation: dict[str, Any]) -> SendRequest:
    """``request`` with a stored conversation (``AgentRun.conversation``): its messages come first in
    the transcript, each a caller context source; the run's own tool results stay tool outputs."""
    stored = conversation["transcript"]
    entries = tuple(
        TranscriptEntry(
            Message.from_openai({k: v for k, v in m.items() if k in _WIRE_KEYS}),
            m["data_class"],
            caller=True,
            identifier=m["identifier"],
        )
        for m in stored
    )
    return replace(
        request,
        task_input_identifier=conversation["task_input"],
        task_input_media=media_of(conversation.get("task_input_media", ())),
        system_override=tuple(_item(item) for item in conversation["system_override"]),
        transcript=entries + request.transcript,
    )
