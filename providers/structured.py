"""Structured output and tool choice held where the provider cannot hold them.

OpenAI-compatible servers receive ``response_format``, ``tool_choice`` and ``parallel_tool_calls`` and
hold them themselves. The offline ``local`` provider answers from a script or a description; these
functions make its replies honour what the request asked for, so a client that relies on them (a
typed object parsed from a ``json_schema`` reply) works against ``make run`` as against a real model:

* :func:`tool_calls_allowed`: ``tool_choice`` ``none`` makes no call, a forced function calls only it,
  ``parallel_tool_calls`` false makes at most one;
* :func:`structured_text`: an unscripted reply to a ``json_object`` or ``json_schema`` request is the
  smallest JSON value the schema admits (deterministic); a scripted one must conform, or the reply is
  refused as ``malformed`` rather than handed on as if it did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from context_assembly.messages import ToolCall, thaw_json
from providers.values import CallOptions

_EMPTY = {"string": "", "integer": 0, "number": 0, "boolean": False, "null": None}


def tool_calls_allowed(options: CallOptions, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    """``calls`` as ``tool_choice`` and ``parallel_tool_calls`` allow them."""
    if options.tool_choice == "none":
        return ()
    forced = options.forced_function
    if forced is not None:
        calls = tuple(call for call in calls if call.name == forced)
    if options.parallel_tool_calls is False:
        calls = calls[:1]
    return calls


def response_schema(options: CallOptions) -> Mapping[str, Any] | None:
    """The JSON schema a reply must hold: ``{}`` (any JSON object's) for ``json_object``, the
    request's for ``json_schema``; None when plain text is asked for."""
    form = options.response_format
    if form is None:
        return None
    if form.get("type") == "json_object":
        return {"type": "object"}
    if form.get("type") == "json_schema":
        spec = form.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        return thaw_json(schema) if isinstance(schema, Mapping) else {}
    return None


def structured_text(schema: Mapping[str, Any], text: str, *, scripted: bool) -> str | None:
    """The reply text for ``schema``: a scripted ``text`` when it conforms (None when it does not), an
    unscripted one replaced by the smallest value the schema admits."""
    if not scripted:
        return json.dumps(smallest_instance(schema, schema), separators=(",", ":"))
    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError, jsonschema.SchemaError):
        return None
    return text


def smallest_instance(schema: Any, root: Mapping[str, Any]) -> Any:
    """The smallest value ``schema`` admits: an object of its required properties (all of them when
    it names none), empty arrays and strings, zeros, the first of an enum or of ``anyOf``; local
    ``$ref``\\s are followed within ``root``."""
    if not isinstance(schema, Mapping):
        return None
    if "$ref" in schema:
        return smallest_instance(_resolved(str(schema["$ref"]), root), root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return smallest_instance(schema[key][0], root)
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        names = schema.get("required", list(properties))
        return {name: smallest_instance(properties.get(name, {}), root) for name in names}
    if kind == "array":
        return [
            smallest_instance(schema.get("items", {}), root) for _ in range(int(schema.get("minItems", 0)))
        ]
    if kind in ("integer", "number") and "minimum" in schema:
        return schema["minimum"]
    if kind == "string" and schema.get("minLength"):
        return "x" * int(schema["minLength"])
    return _EMPTY.get(str(kind))


def _resolved(ref: str, root: Mapping[str, Any]) -> Any:
    node: Any = root
    for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ():
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    return node
