"""The tools of registered MCP servers, as tools of the registry (docs/decisions/0023-mcp-tool-servers.md).

A server's tool ``t`` is the registry's tool ``mcp__<server>__t`` in the group ``mcp:<server>``, of the
server's data class and effect ``non_idempotent_write`` (nothing says a server's tool is safe to run
twice). Every such tool acts on the world (it is consequential) unless an editor trusts the server's
annotations and the tool's say it only reads and reaches nothing outside; its results are untrusted
either way. A configuration allows it the way it allows any tool: by that name in ``allowed_tools`` or by
the group in ``allowed_tool_groups``; the one tool gate then offers it only for a zone and a receiver
its class may go to, and checks it again when the model calls it.

Listings are read with the ``mcp`` SDK (tools/mcp_client.py) only for the servers a
configuration names, and kept per process for ``MCP_TOOL_LISTING_SECONDS`` (a failed listing for a few
seconds), under a key that changes with the server's address or command. A listing is scanned for
prompt injection (each tool's name, description and input schema): a tool with a high-severity
finding is not offered, and every tool with a finding is an ``injection_flagged`` event, once per
listing. The rows are read at every send of a configuration that names a server (one query, outside
the catalogue token), and tools are built from them, so a server's new class, zone or switch applies
at the next send. A server that cannot be listed offers no tools (logged); one that fails during a
call fails that call only: the model reads why, the call is recorded as failed and a ``tool_failed``
event names the tool.

Before a call the server's row is read again: a server switched off, a URL no longer on the
allow-list, or a zone that may not receive the step's label (the arguments were written from the
step's context, and they are sent to the server) refuses the call. The arguments leave redacted.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

from config.caches import cache_register
from config.lru import LruCache
from governance.guardrails.injection import InjectionSeverity, max_severity, scan_for_injection
from governance.guardrails.redaction import redact
from governance.services import EventContext, governance_event_record
from governance.vocabulary import Decision, EventOutcome
from tools.mcp_client import McpTarget, McpToolInfo, McpUnavailable, tool_call, tools_list
from tools.models import McpServer, McpTransport, url_allowed
from tools.registry import REGISTRY, Tool, ToolContext, ToolEffect, ToolFailed, ToolOutput

logger = logging.getLogger(__name__)

PREFIX = "mcp__"
GROUP_PREFIX = "mcp:"
# What providers accept as a function name (OpenAI and Anthropic alike).
FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_RESULT_CHARS = 100_000
FAILED_LISTING_SECONDS = 5.0
NOT_AVAILABLE = "The tool's server is not available."
NOT_A_FUNCTION_NAME = "its name is not a valid function name (letters, digits, '_' and '-', 64 at most)"
AMBIGUOUS_NAME = "its name would be read as another server's tool"


@dataclass(frozen=True)
class Listing:
    """What a server listed, redacted, until ``expires`` (``time.monotonic``); ``error``: why it could
    not be listed. Nothing the server's row decides (class, zone, name) is kept here: tools are built
    from the row of each send, so a stricter class or a switched-off server applies at once."""

    infos: tuple[McpToolInfo, ...]
    error: str
    expires: float
    # Tools with an injection finding in what a model reads of them: name → what was found.
    findings: Mapping[str, ToolFindings] = field(default_factory=dict)

    @property
    def flagged(self) -> dict[str, str]:
        """The tools never offered, with a high-severity finding: name → its high rules."""
        return {name: found.high_rules for name, found in self.findings.items() if not found.offered}


@dataclass(frozen=True)
class ToolFindings:
    """What the injection scanner found in one listed tool (rules only, never text)."""

    severity: InjectionSeverity  # the most severe finding's
    rules: tuple[str, ...]  # every rule found, sorted
    high_rules: str  # the high-severity ones, comma-separated

    @property
    def offered(self) -> bool:
        """A tool with a high-severity finding is not offered, as a skill with one is disabled."""
        return self.severity != InjectionSeverity.HIGH


LISTINGS: LruCache[tuple[Any, ...], Listing] = cache_register(
    LruCache(256),
    name="mcp_tool_listings",
    key="MCP server id, how it is reached, whether it may be",
    invalidation="a new address, command or reachability (a new key); else MCP_TOOL_LISTING_SECONDS",
)


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


def server_target(server: McpServer) -> McpTarget:
    if server.transport == McpTransport.STDIO:
        return McpTarget(
            command=server.command, args=tuple(server.args), timeout_seconds=server.timeout_seconds
        )
    return McpTarget(url=server.url, timeout_seconds=server.timeout_seconds)


def reachable(server: McpServer) -> bool:
    """Whether the service may connect to ``server`` now: active, and an HTTP server's URL still on
    the allow-list (it may have left it since the row was saved)."""
    if not server.is_active:
        return False
    if server.transport == McpTransport.STREAMABLE_HTTP:
        return url_allowed(server.url)
    return server.transport == McpTransport.STDIO


def server_listing(server: McpServer) -> Listing:
    """What the server lists, from this worker's cache while it is fresh, else from the server."""
    may_connect = reachable(server)
    key = (server.pk, server.transport, server.url, server.command, tuple(server.args), may_connect)
    cached = LISTINGS.get(key)
    if cached is not None and cached.expires > time.monotonic():
        return cached
    listing = _listing(server) if may_connect else _failed(NOT_AVAILABLE)
    LISTINGS.put(key, listing)
    return listing


def _failed(error: str) -> Listing:
    return Listing((), error, time.monotonic() + FAILED_LISTING_SECONDS)


def _listing(server: McpServer) -> Listing:
    try:
        infos = tools_list(server_target(server))
    except McpUnavailable as error:
        logger.warning("MCP server %s could not be listed: %s", server.name, error)
        return _failed(str(error))
    # A server's descriptions and schemas are text from outside that goes to every provider offered
    # its tools: redacted here like any other part (the guard pass checks the whole body again).
    redacted = tuple(
        replace(info, description=redact(info.description).text, input_schema=_redacted(info.input_schema))
        for info in infos
    )
    findings = {info.name: found for info in redacted if (found := _injection_findings(info)) is not None}
    _findings_record(server, findings)
    return Listing(redacted, "", time.monotonic() + settings.MCP_TOOL_LISTING_SECONDS, findings)


def _injection_findings(info: McpToolInfo) -> ToolFindings | None:
    """What the injection scanner finds in what a model reads of the tool, as skills and snippets are
    scanned: its name (its words apart), its description and every string of its input schema
    (property names, their descriptions), each on a line of its own. None when nothing is found."""
    text = "\n".join([re.sub(r"[_-]+", " ", info.name), info.description, *_strings(info.input_schema)])
    found = scan_for_injection(text)
    severity = max_severity(found)
    if severity is None:
        return None
    high = ", ".join(sorted({f.rule for f in found if f.severity == InjectionSeverity.HIGH}))
    return ToolFindings(severity, tuple(sorted({f.rule for f in found})), high)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (*_strings(key), *_strings(item))]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _findings_record(server: McpServer, findings: Mapping[str, ToolFindings]) -> None:
    """One content-free ``injection_flagged`` event per tool with a finding, each time a worker lists
    the server: the tool, the severity, the rules and whether it is offered (``observed``) or not
    (``enforced``). An event that cannot be written fails the listing, and with it the send."""
    context = EventContext(correlation_id=uuid.uuid4().hex)
    for name, found in sorted(findings.items()):
        governance_event_record(
            context=context,
            decision=Decision.INJECTION_FLAGGED,
            outcome=EventOutcome.OBSERVED if found.offered else EventOutcome.ENFORCED,
            reason=f"{tool_name(server.name, name)}: {found.severity.value} ({', '.join(found.rules)}); "
            f"{'offered' if found.offered else 'not offered'}",
        )


def server_tools(server: McpServer) -> tuple[list[Tool], list[tuple[str, str]]]:
    """The server's tools as the registry offers them, built from ``server`` as it is now, and the
    listed tools that cannot be offered, each with why (logged)."""
    tools: list[Tool] = []
    skipped: list[tuple[str, str]] = []
    listing = server_listing(server)
    for info in listing.infos:
        name = tool_name(server.name, info.name)
        if not FUNCTION_NAME.match(name):
            skipped.append((info.name, NOT_A_FUNCTION_NAME))
        elif _split(name) != (server.name, info.name):
            # A row saved before its name was validated (``a_``), or a tool named ``_x``: the
            # registry resolves a name by its first separator, so such a tool is never offered.
            skipped.append((info.name, AMBIGUOUS_NAME))
        elif info.name in listing.flagged:
            skipped.append((info.name, f"it reads as a prompt injection ({listing.flagged[info.name]})"))
        elif info.input_schema.get("type") != "object":
            skipped.append((info.name, "its input schema is not a JSON object schema"))
        else:
            tools.append(
                Tool(
                    name=name,
                    description=info.description,
                    parameters=info.input_schema,
                    group=server.group,
                    effect=ToolEffect.NON_IDEMPOTENT_WRITE,
                    handler=_Handler(server.pk, info.name),
                    data_class=server.output_class,
                    consequential=not (server.annotations_trusted and info.claims_read_only),
                )
            )
    if skipped:
        logger.warning("MCP server %s: tools not offered: %s", server.name, skipped)
    return tools, skipped


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, dict):
        return {_redacted(key): _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


@dataclass(frozen=True)
class _Handler:
    """Calls one tool of one server (looked up again by id: the row may have changed)."""

    server_id: int
    tool: str

    def __call__(self, context: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
        server = McpServer.objects.filter(pk=self.server_id).first()
        if server is None or not reachable(server):
            raise ToolFailed(NOT_AVAILABLE)
        label = context.label
        if not server.zone.permits(label):
            raise ToolFailed(
                f"The tool's server may not receive this conversation's content ({label.value} "
                f"in {server.zone.value}).",
                denied=True,
            )
        try:
            result = tool_call(server_target(server), self.tool, _redacted(arguments))
        except McpUnavailable as error:
            raise ToolFailed(f"The tool failed: {error}.") from error
        text = result.text if not result.is_error else f"The tool reported an error: {result.text}"
        if len(text) > MAX_RESULT_CHARS:
            cut = len(text) - MAX_RESULT_CHARS
            text = f"{text[:MAX_RESULT_CHARS]}\n[{cut} more characters of the result were cut]"
        return ToolOutput(text=text, data_class=server.output_class)


class McpToolSource:
    """The registry's source of MCP tools: it reads only the servers a name or group points at."""

    def get(self, name: str) -> Tool | None:
        server_name, _ = _split(name)
        if server_name is None:
            return None
        server = McpServer.objects.filter(name=server_name).first()
        if server is None:
            return None
        return next((t for t in server_tools(server)[0] if t.name == name), None)

    def named(self, names: frozenset[str], groups: frozenset[str]) -> list[Tool]:
        wanted = {server for server, _ in map(_split, names) if server is not None}
        wanted |= {group[len(GROUP_PREFIX) :] for group in groups if group.startswith(GROUP_PREFIX)}
        if not wanted:
            return []
        return [
            tool
            for server in McpServer.objects.filter(name__in=wanted)
            for tool in server_tools(server)[0]
            if tool.name in names or tool.group in groups
        ]


def _split(name: str) -> tuple[str | None, str]:
    if not name.startswith(PREFIX):
        return None, ""
    server, separator, tool = name[len(PREFIX) :].partition("__")
    return (server, tool) if separator and server and tool else (None, "")


SOURCE = McpToolSource()


def register_mcp_source() -> None:
    """Add the MCP source to the registry (agents/apps.py)."""
    REGISTRY.source_add(SOURCE)
