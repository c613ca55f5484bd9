"""The one tool gate, used when offering tools and again when executing a call (docs/governance.md).

Checks, cheapest and least revealing first: registered → enabled → allowed by the configuration →
the trust zone permits the tool's class → so does the receiver's zone, unless the configuration's
declassification covers it and the class (never ``secret_adjacent``): a result above it would make
every later reply undeliverable to that receiver. Observe mode never applies to tools.

Then, for a call only (the policy carries the asking reply's integrity): a consequential tool asked for
while untrusted content was in the step's context is never run on the model's word. By the
configuration's policy it is refused (``untrusted_context``) or held for a person's approval
(:attr:`ToolVerdict.held`), with the untrusted sources named. Read-only tools run as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from governance.policy import Receiver
from governance.vocabulary import DataClass, Integrity, TrustZone, UntrustedActionPolicy
from tools.registry import REGISTRY, Tool, ToolRegistry


class ToolDenial(models.TextChoices):
    NONE = "none", "Allowed"
    NOT_REGISTERED = "not_registered", "Not registered"
    DISABLED = "disabled", "Disabled"
    NOT_ALLOWED = "not_allowed", "Not allowed by the configuration"
    TRUST_ZONE = "trust_zone", "Class above the zone's ceiling"
    RECEIVER = "receiver", "Class above the receiver's zone"
    UNTRUSTED_CONTEXT = "untrusted_context", "Consequential call from an untrusted context"


@dataclass(frozen=True)
class ToolPolicy:
    """The inputs of the gate for one step: explicit, so the gate itself stays pure."""

    zone: TrustZone
    allowed_groups: frozenset[str]
    allowed_tools: frozenset[str]
    disabled_tools: frozenset[str]
    receiver: Receiver | None = None  # who the run's answers are for; None: no reply is delivered
    # The integrity of the reply asking for a call (offering: trusted, nothing asked yet), and what
    # the configuration does with a consequential call from an untrusted one.
    integrity: Integrity = Integrity.TRUSTED
    untrusted_action: str = UntrustedActionPolicy.APPROVE  # as stored: anything else refuses


@dataclass(frozen=True)
class ToolVerdict:
    name: str
    denial: ToolDenial
    data_class: DataClass  # the class governance saw; secret_adjacent for an unknown tool
    tool: Tool | None
    # Allowed, but only once a person approves: a consequential call from an untrusted context.
    held: bool = False

    @property
    def allowed(self) -> bool:
        return self.denial == ToolDenial.NONE

    @property
    def requires_approval(self) -> bool:
        """Whether an allowed call waits for a person: its tool says so, or the context was untrusted."""
        return self.allowed and (self.held or (self.tool is not None and self.tool.requires_approval))


def tool_gate(name: str, policy: ToolPolicy, *, registry: ToolRegistry = REGISTRY) -> ToolVerdict:
    return _verdict(name, registry.get(name), policy)


def _verdict(name: str, tool: Tool | None, policy: ToolPolicy) -> ToolVerdict:
    if tool is None:
        return ToolVerdict(name, ToolDenial.NOT_REGISTERED, DataClass.SECRET_ADJACENT, None)
    data_class = tool.effective_class
    if name in policy.disabled_tools:
        denial = ToolDenial.DISABLED
    elif name not in policy.allowed_tools and tool.group not in policy.allowed_groups:
        denial = ToolDenial.NOT_ALLOWED
    elif not policy.zone.permits(data_class):
        denial = ToolDenial.TRUST_ZONE
    elif _receiver_refuses(policy.receiver, data_class):
        denial = ToolDenial.RECEIVER
    elif _untrusted_call(tool, policy) and policy.untrusted_action != UntrustedActionPolicy.APPROVE:
        denial = ToolDenial.UNTRUSTED_CONTEXT  # any policy but an exact "approve" refuses
    else:
        return ToolVerdict(name, ToolDenial.NONE, data_class, tool, held=_untrusted_call(tool, policy))
    return ToolVerdict(name, denial, data_class, tool)


def _untrusted_call(tool: Tool, policy: ToolPolicy) -> bool:
    return tool.consequential and policy.integrity == Integrity.UNTRUSTED


def _receiver_refuses(receiver: Receiver | None, data_class: DataClass) -> bool:
    return receiver is not None and not receiver.admits(data_class)


def tools_offered(
    policy: ToolPolicy, *, registry: ToolRegistry = REGISTRY
) -> tuple[list[Tool], list[ToolVerdict]]:
    """Tools the configuration names (by name or group) that pass the gate, and the denied ones.

    Tools the configuration does not mention are neither offered nor reported.
    """
    offered: list[Tool] = []
    denied: list[ToolVerdict] = []
    named = registry.named(policy.allowed_tools, policy.allowed_groups)
    for tool in named:
        verdict = _verdict(tool.name, tool, policy)
        if verdict.allowed:
            offered.append(tool)
        else:
            denied.append(verdict)
    for name in sorted(policy.allowed_tools - {tool.name for tool in named}):
        denied.append(_verdict(name, None, policy))
    return offered, denied
