"""The receipt's sources come from the decision's groups, in the order the sources were given."""

from __future__ import annotations

from agents.runtime.receipts import _sources
from governance.policy import Source, decide
from governance.vocabulary import Enforcement, EnforcementMode, SourceKind, TrustZone


def test_two_classifications_of_one_kind_class_and_outcome_make_one_group_in_source_order():
    # The same class under two ceilings: two verdicts in the decision, one group in the receipt,
    # whose identifiers keep the order the tool results were sent in.
    sources = [
        Source(SourceKind.TOOL_OUTPUT, "call_a", "editor_content", None, Enforcement.ENFORCE),
        Source(SourceKind.TOOL_OUTPUT, "call_b", "editor_content", "external_eu", Enforcement.ENFORCE),
        Source(SourceKind.TOOL_OUTPUT, "call_c", "editor_content", None, Enforcement.ENFORCE),
        Source(SourceKind.ASSISTANT_TURN, "transcript[3]", "public_content", None, Enforcement.ENFORCE),
        Source(SourceKind.TOOL_OUTPUT, "call_d", "editor_content", "external_eu", Enforcement.ENFORCE),
    ]
    decision = decide(sources, TrustZone.LOCAL, EnforcementMode.ENFORCE_ALL)
    assert len(decision.groups) == 3

    assert _sources(decision, {}) == [
        {
            "kind": SourceKind.TOOL_OUTPUT,
            "data_class": "editor_content",
            "outcome": "allowed",
            "pinned_version": None,
            "identifiers": ["call_a", "call_b", "call_c", "call_d"],
        },
        {
            "kind": SourceKind.ASSISTANT_TURN,
            "data_class": "public_content",
            "outcome": "allowed",
            "pinned_version": None,
            "identifiers": ["transcript[3]"],
        },
    ]
