"""A run's stored request and transcript, as the seam's types; and its run context."""

from __future__ import annotations

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


def message_from_row(row: RunMessage) -> Message:
    return Message(
        role=row.role,
        content=row.content,
        tool_calls=tuple(
            ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in row.tool_calls
        ),
        tool_call_id=row.tool_call_id or None,
    )


def run_request(run: AgentRun, context: RunContext) -> SendRequest:
    rows = list(RunMessage.objects.filter(run=run).order_by("position"))
    tail_note = None
    if run.configuration.context_usage_note == ContextUsageNote.TAIL:
        tail_note = render_tail_note(context.context_usage)
    return SendRequest(
        task_input=run.input_text,
        input_data_class=run.input_data_class,
        caller_context=tuple(
            ContextItem(item["name"], item["text"], item["data_class"]) for item in run.caller_context
        ),
        transcript=tuple(message_from_row(row) for row in rows),
        transcript_classes=tuple(row.data_class for row in rows),
        request_skills=tuple(skills_in_order(skill_ids=run.request_skills)),
        tail_note=tail_note,
    )
