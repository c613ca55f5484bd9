"""Integrity labels of sources and of what is derived from them, and the tool gate's rule for
consequential calls from an untrusted context (docs/decisions/0040)."""

from __future__ import annotations

import pytest

from governance.policy import Source, decide
from governance.vocabulary import EnforcementMode, Integrity, SourceKind, TrustZone, UntrustedActionPolicy
from skills.models import Skill, SkillTrustLevel
from tools.gate import ToolDenial, ToolPolicy, tool_gate
from tools.registry import Tool, ToolEffect, ToolRegistry

PUBLIC = "public_content"


def source(kind: SourceKind, integrity: str = "") -> Source:
    return Source(kind, kind.value, PUBLIC, None, "enforce", None, integrity)


@pytest.mark.parametrize(
    ("kind", "stored", "level"),
    [
        (SourceKind.SYSTEM_PROMPT, "", Integrity.TRUSTED),
        (SourceKind.SNIPPET, "", Integrity.TRUSTED),
        (SourceKind.TASK_INPUT, "", Integrity.CALLER),
        (SourceKind.CALLER_CONTEXT, "", Integrity.CALLER),
        (SourceKind.TOOL_OUTPUT, "", Integrity.UNTRUSTED),
        (SourceKind.TOOL_OUTPUT, "trusted", Integrity.TRUSTED),  # a tool declared trusted
        (SourceKind.SKILL, "", Integrity.UNTRUSTED),
        (SourceKind.ASSISTANT_TURN, "caller", Integrity.CALLER),
        (SourceKind.ASSISTANT_TURN, "", Integrity.UNTRUSTED),  # stored before levels were kept
        (SourceKind.ASSISTANT_TURN, "bogus", Integrity.UNTRUSTED),  # unreadable: fail closed
    ],
)
def test_each_source_has_the_integrity_of_its_kind_or_its_stored_level(kind, stored, level):
    decision = decide([source(kind, stored)], TrustZone.LOCAL, EnforcementMode.ENFORCE_ALL)
    assert decision.integrity == level


@pytest.mark.parametrize(
    ("kinds", "level"),
    [
        ([SourceKind.SYSTEM_PROMPT, SourceKind.SNIPPET], Integrity.TRUSTED),
        ([SourceKind.SYSTEM_PROMPT, SourceKind.TASK_INPUT], Integrity.CALLER),
        ([SourceKind.SYSTEM_PROMPT, SourceKind.TASK_INPUT, SourceKind.TOOL_OUTPUT], Integrity.UNTRUSTED),
        ([SourceKind.TOOL_OUTPUT, SourceKind.SNIPPET], Integrity.UNTRUSTED),
        ([], Integrity.TRUSTED),
    ],
)
def test_derived_content_takes_the_least_trusted_level_sent_for_it(kinds, level):
    decision = decide([source(kind) for kind in kinds], TrustZone.LOCAL, EnforcementMode.ENFORCE_ALL)
    assert decision.integrity == level


@pytest.mark.parametrize(
    ("trust_level", "level"),
    [
        (SkillTrustLevel.UNTRUSTED, "untrusted"),
        (SkillTrustLevel.COMMUNITY, "untrusted"),
        (SkillTrustLevel.VERIFIED, "trusted"),
        (SkillTrustLevel.FIRST_PARTY, "trusted"),
        ("corrupt", "untrusted"),
    ],
)
def test_only_a_skill_from_a_reviewed_source_is_trusted(trust_level, level):
    skill = Skill(path="a/SKILL.md", data_class=PUBLIC, ceiling="external_global", trust_level=trust_level)
    assert skill.as_source().integrity == level


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for name, consequential in (("reader", False), ("writer", True)):
        registry.register(
            Tool(
                name=name,
                description="",
                parameters={"type": "object"},
                group="content",
                effect=ToolEffect.READ_ONLY,
                handler=lambda context, arguments: "",
                consequential=consequential,
            )
        )
    registry.register(
        Tool(
            name="undeclared",
            description="",
            parameters={"type": "object"},
            group="content",
            effect=ToolEffect.READ_ONLY,
            handler=lambda context, arguments: "",
        )
    )
    return registry


def _policy(integrity: Integrity, action: str = UntrustedActionPolicy.APPROVE) -> ToolPolicy:
    return ToolPolicy(
        zone=TrustZone.LOCAL,
        allowed_groups=frozenset({"content"}),
        allowed_tools=frozenset(),
        disabled_tools=frozenset(),
        integrity=integrity,
        untrusted_action=action,
    )


@pytest.mark.parametrize(
    ("name", "integrity", "action", "denial", "held"),
    [
        ("writer", Integrity.UNTRUSTED, "approve", ToolDenial.NONE, True),
        ("writer", Integrity.UNTRUSTED, "refuse", ToolDenial.UNTRUSTED_CONTEXT, False),
        ("writer", Integrity.UNTRUSTED, "typo", ToolDenial.UNTRUSTED_CONTEXT, False),  # fail closed
        ("undeclared", Integrity.UNTRUSTED, "approve", ToolDenial.NONE, True),  # undeclared: consequential
        ("writer", Integrity.CALLER, "refuse", ToolDenial.NONE, False),
        ("writer", Integrity.TRUSTED, "refuse", ToolDenial.NONE, False),
        ("reader", Integrity.UNTRUSTED, "refuse", ToolDenial.NONE, False),
    ],
)
def test_the_gate_holds_or_refuses_a_consequential_call_from_an_untrusted_context(
    name, integrity, action, denial, held
):
    verdict = tool_gate(name, _policy(integrity, action), registry=_registry())
    assert (verdict.denial, verdict.held, verdict.requires_approval) == (
        denial,
        held,
        held,
    )
