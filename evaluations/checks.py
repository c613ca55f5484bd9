"""Whether an evaluation case's expectations held for one result.

Each expectation the case sets is one check ``{"expectation", "held"}``, in a fixed order. Text is
compared case-insensitively with the (redacted) answer; a pattern is searched in it as it is, a JSON
schema validates it parsed, and a tool expectation reads the answer's tool calls
(:mod:`evaluations.check_rules`). The answer's tokens are the provider-reported
completion tokens, else the one estimator's count of the answer. A refused case has no answer: it
contains nothing (``must contain`` fails, ``must not contain`` holds) and took no tokens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from context_assembly.estimator import Estimator
from context_assembly.profiles import ModelProfile
from evaluations.check_rules import matches, tool_called, valid_json
from evaluations.models import EvaluationCase, ResultOutcome


def answer_tokens(fields: Mapping[str, Any], profile: ModelProfile) -> int:
    reported = fields.get("completion_tokens")
    if reported is not None:
        return int(reported)
    answer = str(fields.get("answer", ""))
    return Estimator(profile).count_text(answer) if answer else 0


def expectations_checked(
    case: EvaluationCase, fields: Mapping[str, Any], profile: ModelProfile
) -> list[dict[str, Any]]:
    """The case's expectations against a result's ``fields`` (outcome, answer, completion tokens)."""
    answer = str(fields.get("answer", "")).casefold()
    answered = fields["outcome"] == ResultOutcome.ANSWERED
    checks: list[dict[str, Any]] = []
    if case.must_be_permitted:
        permitted = fields["outcome"] != ResultOutcome.REFUSED
        checks.append({"expectation": "must be permitted", "held": permitted})
    if case.must_contain:
        held = answered and case.must_contain.casefold() in answer
        checks.append({"expectation": f"must contain “{case.must_contain}”", "held": held})
    if case.must_not_contain:
        held = case.must_not_contain.casefold() not in answer
        checks.append({"expectation": f"must not contain “{case.must_not_contain}”", "held": held})
    if case.must_match:
        held = answered and matches(case.must_match, str(fields.get("answer", "")))
        checks.append({"expectation": f"matches /{case.must_match}/", "held": held})
    if case.must_be_valid_json is not None:
        held, why = (
            valid_json(case.must_be_valid_json, str(fields.get("answer", ""))) if answered else (False, "")
        )
        expectation = "valid JSON for the schema" + (f" ({why})" if why else "")
        checks.append({"expectation": expectation, "held": held})
    if case.must_call_tool:
        calls = fields.get("tool_calls") or []
        held = answered and tool_called(calls, case.must_call_tool, case.tool_arguments_match)
        wanted = json.dumps(case.tool_arguments_match, sort_keys=True) if case.tool_arguments_match else "any"
        checks.append({"expectation": f"calls {case.must_call_tool} with arguments {wanted}", "held": held})
    if case.max_tokens is not None:
        tokens = answer_tokens(fields, profile)
        held = tokens <= case.max_tokens
        checks.append({"expectation": f"at most {case.max_tokens:,} tokens (took {tokens:,})", "held": held})
    return checks
