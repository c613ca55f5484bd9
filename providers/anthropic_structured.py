"""Structured output and tool choice on the Messages API (Anthropic), which has no ``response_format``.

* ``response_format`` (``json_object`` or ``json_schema``) is held by a **response tool**: a tool named
  :data:`RESPONSE_TOOL` whose ``input_schema`` is the schema is offered beside the caller's tools. With
  no caller tool to choose (none offered, or ``tool_choice`` ``none``) it is forced
  (``{"type": "tool"}``); beside the caller's tools the model must call a tool (``{"type": "any"}``),
  one of theirs or the response tool. The response tool's input is the reply's text (compact JSON),
  never a tool call, and is checked against the schema: a reply that does not conform is ``malformed``
  rather than handed on as if it did (Anthropic does not guarantee a tool input matches its schema).
  A forced function or ``required`` leaves the response tool out: that turn answers with a call.
* ``parallel_tool_calls`` false is ``tool_choice.disable_parallel_tool_use`` (beside tools only, as on
  the OpenAI API).
* ``tool_choice`` is Anthropic's shape (``required`` is ``any``).

What cannot be held is refused before anything is sent (``agents/runtime/call_options.py``): ``seed``,
a schema whose root is not an object (a tool's input is one), a caller tool named :data:`RESPONSE_TOOL`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from providers.structured import response_schema
from providers.values import CallOptions

RESPONSE_TOOL = "structured_response"
RESPONSE_TOOL_DESCRIPTION = "Give your final answer by calling this tool; its input is the answer."
_TOOL_CHOICE_MODES = {"auto": "auto", "none": "none", "required": "any"}


def response_tool(options: CallOptions) -> dict[str, Any] | None:
    """The response tool of ``options`` (None: plain text is asked for, or a call is forced)."""
    schema = response_schema(options)
    if schema is None or options.forced_function is not None or options.tool_choice == "required":
        return None
    input_schema = dict(schema)
    input_schema.setdefault("type", "object")
    return {"name": RESPONSE_TOOL, "description": RESPONSE_TOOL_DESCRIPTION, "input_schema": input_schema}


def tool_fields(options: CallOptions, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """``tools`` (the caller's, translated) and ``tool_choice`` as the Messages API takes them, with
    the response tool where ``options`` ask for structured output."""
    choice: dict[str, Any] | None = None
    responding = response_tool(options)
    if responding is not None:
        caller_choosable = bool(tools) and options.tool_choice != "none"
        choice = {"type": "any"} if caller_choosable else {"type": "tool", "name": RESPONSE_TOOL}
        tools = [*tools, responding]
    elif options.forced_function is not None:
        choice = {"type": "tool", "name": options.forced_function}
    elif options.tool_choice is not None:
        choice = {"type": _TOOL_CHOICE_MODES[str(options.tool_choice)]}
    if not tools:
        return {}
    if options.parallel_tool_calls is False and (choice or {}).get("type") != "none":
        choice = {"type": "auto", **(choice or {}), "disable_parallel_tool_use": True}
    fields: dict[str, Any] = {"tools": tools}
    if choice is not None:
        fields["tool_choice"] = choice
    return fields


def is_response(options: CallOptions, tool_name: str | None) -> bool:
    """Whether a ``tool_use`` block named ``tool_name`` is the reply's structured text."""
    return tool_name == RESPONSE_TOOL and response_tool(options) is not None


def response_text(options: CallOptions, tool_input: Any) -> str | None:
    """The reply text of the response tool's ``tool_input``; None when it does not conform."""
    schema = response_schema(options)
    try:
        jsonschema.validate(tool_input, schema if isinstance(schema, Mapping) else {})
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return None
    return json.dumps(tool_input, separators=(",", ":"), ensure_ascii=False)
