"""The one tool gate: registered → enabled → allowed by the configuration → permitted in the zone → and
for the receiver; tools of a source (MCP servers) are found by name or group and gated the same way."""

from __future__ import annotations

import pytest

from governance.policy import Receiver
from governance.vocabulary import DataClass, TrustZone
from tools.gate import ToolDenial, ToolPolicy, tool_gate, tools_offered
from tools.registry import Tool, ToolEffect, ToolRegistry


def tool(name: str, group: str, data_class: DataClass | None = None) -> Tool:
    return Tool(
        name, f"{name} tool", {"type": "object"}, group, ToolEffect.READ_ONLY, lambda c, a: "", data_class
    )


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(tool("search", "rag"))
    registry.register(tool("read_logs", "system"))
    registry.register(tool("vault", "content", DataClass.SECRET_ADJACENT))
    registry.register(tool("mystery", "unheard_of_group"))
    return registry


def policy(zone=TrustZone.LOCAL, groups=(), tools=(), disabled=()) -> ToolPolicy:
    return ToolPolicy(zone, frozenset(groups), frozenset(tools), frozenset(disabled))


def test_unregistered_tool_is_denied_as_secret_adjacent(registry):
    verdict = tool_gate("nope", policy(tools=["nope"]), registry=registry)
    assert (verdict.denial, verdict.data_class, verdict.allowed) == (
        ToolDenial.NOT_REGISTERED,
        DataClass.SECRET_ADJACENT,
        False,
    )


def test_disabled_tool_is_denied_before_the_configuration_is_consulted(registry):
    verdict = tool_gate("search", policy(groups=["rag"], disabled=["search"]), registry=registry)
    assert verdict.denial == ToolDenial.DISABLED


def test_tool_not_named_by_the_configuration_is_denied(registry):
    assert tool_gate("search", policy(groups=["content"]), registry=registry).denial == ToolDenial.NOT_ALLOWED


@pytest.mark.parametrize(
    ("name", "zone", "denial"),
    [
        ("search", TrustZone.EXTERNAL_GLOBAL, ToolDenial.NONE),
        ("read_logs", TrustZone.PRIVATE_HOSTED, ToolDenial.NONE),
        ("read_logs", TrustZone.EXTERNAL_EU, ToolDenial.TRUST_ZONE),
        ("vault", TrustZone.LOCAL, ToolDenial.NONE),
        ("vault", TrustZone.PRIVATE_HOSTED, ToolDenial.TRUST_ZONE),
        ("mystery", TrustZone.LOCAL, ToolDenial.NONE),
        ("mystery", TrustZone.PRIVATE_HOSTED, ToolDenial.TRUST_ZONE),
    ],
)
def test_zone_must_permit_the_tools_class(registry, name, zone, denial):
    verdict = tool_gate(name, policy(zone=zone, tools=[name]), registry=registry)
    assert verdict.denial == denial


def test_class_resolution_explicit_then_group_default_then_secret_adjacent(registry):
    assert registry.get("vault").effective_class == DataClass.SECRET_ADJACENT
    assert registry.get("search").effective_class == DataClass.PUBLIC_CONTENT
    assert registry.get("read_logs").effective_class == DataClass.SYSTEM_DIAGNOSTICS
    assert registry.get("mystery").effective_class == DataClass.SECRET_ADJACENT


def test_offered_tools_are_exactly_those_that_pass_and_denials_are_reported(registry):
    offered, denied = tools_offered(
        policy(zone=TrustZone.EXTERNAL_EU, groups=["rag", "system"], tools=["vault", "ghost"]),
        registry=registry,
    )
    assert [t.name for t in offered] == ["search"]
    assert sorted((v.name, v.denial) for v in denied) == [
        ("ghost", ToolDenial.NOT_REGISTERED),
        ("read_logs", ToolDenial.TRUST_ZONE),
        ("vault", ToolDenial.TRUST_ZONE),
    ]


def test_registering_a_name_twice_is_refused(registry):
    with pytest.raises(ValueError, match="already registered"):
        registry.register(tool("search", "rag"))


@pytest.mark.parametrize(
    ("receiver", "denial"),
    [
        (Receiver(TrustZone.LOCAL), ToolDenial.NONE),
        (Receiver(TrustZone.PRIVATE_HOSTED), ToolDenial.NONE),
        (Receiver(TrustZone.EXTERNAL_EU), ToolDenial.RECEIVER),
        # The configuration declares its answers deliverable down to the receiver's zone: no restriction.
        (Receiver(TrustZone.EXTERNAL_EU, declassified_to=TrustZone.EXTERNAL_GLOBAL), ToolDenial.NONE),
        (Receiver(TrustZone.EXTERNAL_GLOBAL, declassified_to=TrustZone.EXTERNAL_EU), ToolDenial.RECEIVER),
    ],
)
def test_a_tool_above_the_receivers_zone_is_denied_unless_declassified(registry, receiver, denial):
    gated = ToolPolicy(TrustZone.LOCAL, frozenset(["system"]), frozenset(), frozenset(), receiver)
    assert tool_gate("read_logs", gated, registry=registry).denial == denial
    offered, denied = tools_offered(gated, registry=registry)
    assert ([t.name for t in offered], [v.denial for v in denied]) == (
        ([], [denial]) if denial != ToolDenial.NONE else (["read_logs"], [])
    )


@pytest.mark.parametrize("name", ["vault", "mystery"])  # secret_adjacent: declared, and by default
def test_a_declassification_never_lifts_the_receiver_gate_for_a_secret_adjacent_tool(registry, name):
    receiver = Receiver(TrustZone.EXTERNAL_GLOBAL, declassified_to=TrustZone.EXTERNAL_GLOBAL)
    gated = ToolPolicy(TrustZone.LOCAL, frozenset(), frozenset([name]), frozenset(), receiver)
    assert tool_gate(name, gated, registry=registry).denial == ToolDenial.RECEIVER
    assert tools_offered(gated, registry=registry)[0] == []


class NamedSource:
    """A registry source answering for one name and one group, as the MCP source does."""

    def __init__(self) -> None:
        self.asked: list[tuple[frozenset[str], frozenset[str]]] = []

    def get(self, name: str) -> Tool | None:
        return tool("mcp__s__t", "mcp:s") if name == "mcp__s__t" else None

    def named(self, names: frozenset[str], groups: frozenset[str]) -> list[Tool]:
        self.asked.append((names, groups))
        return [tool("mcp__s__t", "mcp:s")] if "mcp:s" in groups or "mcp__s__t" in names else []


def test_a_sources_tools_are_found_by_name_or_group_and_gated_like_the_rest(registry):
    source = NamedSource()
    registry.source_add(source)
    offered, denied = tools_offered(policy(groups=["rag", "mcp:s"]), registry=registry)
    assert ([t.name for t in offered], denied) == (["mcp__s__t", "search"], [])
    assert tool_gate("mcp__s__t", policy(tools=["mcp__s__t"]), registry=registry).denial == ToolDenial.NONE
    assert tool_gate("mcp__s__t", policy(groups=["rag"]), registry=registry).denial == ToolDenial.NOT_ALLOWED
    assert source.asked == [(frozenset(), frozenset(["rag", "mcp:s"]))]
    assert [t.name for t in registry.all()] == ["mystery", "read_logs", "search", "vault"]


def test_a_tools_spec_is_built_once_and_offered_as_the_tool_declares_it():
    search = tool("search", "rag")
    spec = search.spec()
    assert search.spec() is spec  # every step that offers it gets the same spec, its digest kept
    assert spec.to_openai() == {
        "type": "function",
        "function": {
            "name": "search",
            "description": search.description,
            "parameters": dict(search.parameters),
        },
    }
