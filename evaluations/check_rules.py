"""The deterministic rules an evaluation case may set beyond contains / not contains: a regular
expression, JSON valid against a JSON schema, and a tool called with arguments holding given values.
Each is a pure function of the answer (and its tool calls), and each value an editor enters is
validated when the case is saved, so a broken pattern or schema never reaches an evaluation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for


def pattern_valid(value: str) -> None:
    try:
        re.compile(value)
    except re.error as error:
        raise ValidationError(f"Not a regular expression: {error}.") from None


def json_schema_valid(value: object) -> None:
    if value is None:
        return
    if not isinstance(value, dict | bool):
        raise ValidationError("A JSON schema is an object (or true/false).")
    try:
        validator_for(value, default=Draft202012Validator).check_schema(value)
    except SchemaError as error:
        raise ValidationError(f"Not a JSON schema: {error.message}.") from None


def json_object(value: object) -> None:
    if not isinstance(value, dict):
        raise ValidationError("Expected a JSON object.")


def matches(pattern: str, answer: str) -> bool:
    return re.search(pattern, answer) is not None


def valid_json(schema: Any, answer: str) -> tuple[bool, str]:
    """Whether ``answer`` is JSON valid against ``schema``, and why not."""
    try:
        document = json.loads(answer)
    except ValueError:
        return False, "not JSON"
    validator = validator_for(schema, default=Draft202012Validator)(schema)
    error = next(iter(validator.iter_errors(document)), None)
    return (True, "") if error is None else (False, error.message)


def tool_called(calls: Sequence[Mapping[str, Any]], name: str, arguments: Mapping[str, Any]) -> bool:
    """Whether one of ``calls`` is ``name`` with arguments (a JSON object text) holding every key of
    ``arguments`` with an equal value."""
    for call in calls:
        if call.get("name") != name:
            continue
        try:
            sent = json.loads(str(call.get("arguments") or "{}"))
        except ValueError:
            continue
        if isinstance(sent, dict) and all(key in sent and sent[key] == v for key, v in arguments.items()):
            return True
    return False
