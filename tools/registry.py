"""A code registry of tools; each declares its group, data class, effect, whether it acts on the world
and whether its results are trusted (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Protocol

from django.db import models

from context_assembly.messages import ToolSpec
from context_assembly.usage import RunContext
from governance.vocabulary import DataClass, TrustZone


class ToolEffect(models.TextChoices):
    READ_ONLY = "read_only", "Read only"
    IDEMPOTENT_WRITE = "idempotent_write", "Idempotent write"
    NON_IDEMPOTENT_WRITE = "non_idempotent_write", "Non-idempotent write"


# Each group takes the class of its worst plausible member; unknown groups are secret_adjacent.
GROUP_DEFAULT_CLASSES: Mapping[str, DataClass] = MappingProxyType(
    {
        "content": DataClass.EDITOR_CONTENT,
        "editing": DataClass.EDITOR_CONTENT,
        "files": DataClass.EDITOR_CONTENT,
        "skills": DataClass.EDITOR_CONTENT,
        "rag": DataClass.PUBLIC_CONTENT,
        "structure": DataClass.INTERNAL_CONFIGURATION,
        "configuration": DataClass.INTERNAL_CONFIGURATION,
        "code": DataClass.SOURCE_CODE,
        "system": DataClass.SYSTEM_DIAGNOSTICS,
        "accounts": DataClass.SECRET_ADJACENT,
    }
)


@dataclass(frozen=True)
class ToolContext:
    """What a tool receives: the run context (with ``context_usage``) and where the step runs."""

    run: RunContext
    zone: TrustZone
    configuration: str
    step_index: int
    # The label of the reply that asked for the call: the most sensitive class its context held
    # (what a tool that sends content out, as an MCP server's does, may pass on).
    label: DataClass
    catalog: str | None = None  # the catalogue token the step read (lookups may be cached under it)


@dataclass(frozen=True)
class ToolOutput:
    """A tool result that declares the class of what it returns, when that may exceed the tool's own
    class (e.g. a loaded skill). The stricter of the two classifies the result. A trusted tool's result
    may declare a lower integrity level (``caller``: a value the service checked); other tools'
    results are untrusted whatever they declare."""

    text: str
    data_class: DataClass
    integrity: str = ""  # empty: the tool's own level


class ToolFailed(Exception):
    """Raised by a handler whose tool could not do its work for a reason the model may be told (its
    server is down or slow). The message is the model's tool result; the call is recorded as failed
    and a content-free event names the tool and the message: ``tool_failed``, or ``tool_denied`` when
    a rule refused the call (``denied``)."""

    def __init__(self, message: str, *, denied: bool = False) -> None:
        super().__init__(message)
        self.denied = denied


ToolHandler = Callable[[ToolContext, dict[str, Any]], "str | ToolOutput"]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: Mapping[str, Any]
    group: str
    effect: ToolEffect
    handler: ToolHandler = field(repr=False)
    data_class: DataClass | None = None  # None: the group default
    # A call waits for a person's decision before it runs (agents/runtime/approvals.py).
    requires_approval: bool = False
    # Whether a call acts on the world (sends, writes, pays, deletes, calls out) rather than only
    # reading; a tool that does not say is consequential (fail closed). Apart from ``effect``, which
    # says whether a call may be repeated: a fetch of a URL repeats safely and still calls out. Such a
    # call is never executed on the model's word while untrusted content is in the step's context.
    consequential: bool = True
    # Whether its results are trusted (editor-published material it reads); else they are untrusted.
    trusted: bool = False

    @property
    def effective_class(self) -> DataClass:
        """Explicit declaration, else the group default, else ``secret_adjacent`` (fail-closed)."""
        if self.data_class is not None:
            return self.data_class
        return GROUP_DEFAULT_CLASSES.get(self.group, DataClass.SECRET_ADJACENT)

    def spec(self) -> ToolSpec:
        """The tool as a model is offered it. Built once per tool: a tool never changes, and every step
        that offers it would otherwise validate and freeze its schema again, and hash it again to find
        its token count (``ToolSpec.digest``)."""
        return self._spec

    @cached_property
    def _spec(self) -> ToolSpec:
        return ToolSpec.from_openai(
            {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}
        )


class ToolSource(Protocol):
    """Tools that are not code: found when asked for by name or group (tools/mcp.py). A source
    answers only for the names and groups it owns, and reads nothing for the others."""

    def get(self, name: str) -> Tool | None: ...

    def named(self, names: frozenset[str], groups: frozenset[str]) -> list[Tool]: ...


class ToolRegistry:
    """Name → tool. Registration is explicit (``builtins`` registers the shipped tools); sources add
    the tools of registered MCP servers."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []

    def source_add(self, source: ToolSource) -> None:
        if source not in self._sources:
            self._sources.append(source)

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is not None:
            return tool
        return next((found for s in self._sources if (found := s.get(name)) is not None), None)

    def all(self) -> list[Tool]:
        """The tools registered in code (a source's tools are only found by name or group)."""
        return sorted(self._tools.values(), key=lambda tool: tool.name)

    def named(self, names: frozenset[str], groups: frozenset[str]) -> list[Tool]:
        """Every tool named in ``names`` or in one of ``groups``, by name."""
        found = {t.name: t for t in self._tools.values() if t.name in names or t.group in groups}
        for source in self._sources:
            for tool in source.named(names, groups):
                found.setdefault(tool.name, tool)
        return sorted(found.values(), key=lambda tool: tool.name)


REGISTRY = ToolRegistry()
