"""Naming the untrusted content a step's reply was derived from, for the person who approves a
consequential call made from it and for the event that records the call's hold or refusal
(docs/decisions/0040-integrity-labels-and-consequential-tools.md).

The names come from the step's receipt (``untrusted_sources``: ``kind:identifier``, redacted as events
are), never from content; a tool result is named with the tool that returned it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.models import AgentRun, RunMessage
from governance.vocabulary import SourceKind

_TOOL_OUTPUT = f"{SourceKind.TOOL_OUTPUT.value}:"
_ASSISTANT_TURN = f"{SourceKind.ASSISTANT_TURN.value}:"
# How many sources an event's reason names before it counts the rest (its reason holds 300 characters).
EVENT_NAMES = 3


def untrusted_sources(run: AgentRun, receipt: Mapping[str, Any] | None) -> list[str]:
    """The untrusted sources of the step whose receipt is ``receipt``, a tool result as
    ``tool_output:<call id> (<tool>)``: first what came from outside (tool results, skills, documents),
    then the earlier replies derived from it, each in the order they were sent. A step without a
    receipt (none was recorded) names nothing."""
    names = [str(name) for name in (receipt or {}).get("untrusted_sources", [])]
    names.sort(key=lambda name: name.startswith(_ASSISTANT_TURN))
    call_ids = [name[len(_TOOL_OUTPUT) :] for name in names if name.startswith(_TOOL_OUTPUT)]
    tools = dict(
        RunMessage.objects.filter(run=run, role="tool", tool_call_id__in=call_ids).values_list(
            "tool_call_id", "tool_name"
        )
    )
    return [
        f"{name} ({tools[name[len(_TOOL_OUTPUT) :]]})"
        if name.startswith(_TOOL_OUTPUT) and name[len(_TOOL_OUTPUT) :] in tools
        else name
        for name in names
    ]


def untrusted_named(sources: Sequence[str]) -> str:
    """``sources`` as an event's reason names them: the first few, then how many more."""
    named = ", ".join(sources[:EVENT_NAMES])
    more = len(sources) - EVENT_NAMES
    return f"{named} and {more} more" if more > 0 else named or "none recorded"
