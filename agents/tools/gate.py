"""The one tool gate, used when offering tools and again when executing a call (docs/governance.md).

Checks, cheapest and least revealing first: registered → enabled → allowed by the configuration →
the trust zone permits the tool's class. Observe mode never applies to tools.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from agents.tools.registry import REGISTRY, Tool, ToolRegistry
from governance.vocabulary import DataClass, TrustZone


class ToolDenial(models.TextChoices):
    NONE = "none", "Allowed"
    NOT_REGISTERED = "not_registered", "Not registered"
    DISABLED = "disabled", "Disabled"
    NOT_ALLOWED = "not_allowed", "Not allowed by the configuration"
    TRUST_ZONE = "trust_zone", "Class above the zone's ceiling"


@dataclass(frozen=True)
class ToolPolicy:
    """The inputs of the gate for one step: explicit, so the gate itself stays pure."""

    zone: TrustZone
    allowed_groups: frozenset[str]
    allowed_tools: frozenset[str]
    disabled_tools: frozenset[str]


@dataclass(frozen=True)
class ToolVerdict:
    name: str
    denial: ToolDenial
    data_class: DataClass  # the class governance saw; secret_adjacent for an unknown tool
    tool: Tool | None

    @property
    def allowed(self) -> bool:
        return self.denial == ToolDenial.NONE


def tool_gate(name: str, policy: ToolPolicy, *, registry: ToolRegistry = REGISTRY) -> ToolVerdict:
    tool = registry.get(name)
    if tool is None:
        return ToolVerdict(name, ToolDenial.NOT_REGISTERED, DataClass.SECRET_ADJACENT, None)
    data_class = tool.effective_class
    if name in policy.disabled_tools:
        denial = ToolDenial.DISABLED
    elif name not in policy.allowed_tools and tool.group not in policy.allowed_groups:
        denial = ToolDenial.NOT_ALLOWED
    elif not policy.zone.permits(data_class):
        denial = ToolDenial.TRUST_ZONE
    else:
        denial = ToolDenial.NONE
    return ToolVerdict(name, denial, data_class, tool)


def tools_offered(
    policy: ToolPolicy, *, registry: ToolRegistry = REGISTRY
) -> tuple[list[Tool], list[ToolVerdict]]:
    """Tools the configuration names (by name or group) that pass the gate, and the denied ones.

    Tools the configuration does not mention are neither offered nor reported.
    """
    offered: list[Tool] = []
    denied: list[ToolVerdict] = []
    for tool in registry.all():
        if tool.name not in policy.allowed_tools and tool.group not in policy.allowed_groups:
            continue
        verdict = tool_gate(tool.name, policy, registry=registry)
        if verdict.allowed:
            offered.append(tool)
        else:
            denied.append(verdict)
    for name in sorted(policy.allowed_tools - {tool.name for tool in registry.all()}):
        denied.append(tool_gate(name, policy, registry=registry))
    return offered, denied
