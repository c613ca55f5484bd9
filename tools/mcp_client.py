"""The MCP client, from synchronous code: list a server's tools, call one. Built on the official ``mcp``
SDK (``mcp.Client``); nothing of Django here.

Each operation opens its own session on a fresh event loop (``asyncio.run``) and closes it before
returning, so a worker thread holds nothing between calls and no session is shared across threads or
processes. Called from a thread that already runs an event loop (an async view, an eager task inside
one), the operation runs on a short-lived thread of its own: ``asyncio.run`` cannot nest.

Every operation is bounded twice: the SDK's ``read_timeout_seconds`` for each request, and an outer
cap over the whole session (connect, initialize and the request), which covers a server that accepts
the connection and never answers. Whatever fails — nothing listening, a timeout, a broken server, a
command that cannot start — leaves as one :class:`McpUnavailable` naming the cause, never an
``ExceptionGroup`` and never the server's own text.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.types import REQUEST_TIMEOUT

T = TypeVar("T")

# A cap on pages of tools/list: a server that keeps answering with a cursor is not followed forever.
MAX_LIST_PAGES = 10
# Slack over the per-request timeout for connecting and initializing the session.
SESSION_SLACK_SECONDS = 5.0


class McpUnavailable(Exception):
    """The server could not be reached, did not answer in time, or broke the protocol. The message
    names the kind of failure only (it reaches the model and the governance log)."""


@dataclass(frozen=True)
class McpTarget:
    """How to reach one server: a streamable HTTP URL, or a command run over stdio."""

    url: str = ""
    command: str = ""
    args: tuple[str, ...] = ()
    timeout_seconds: float = 10.0

    def sdk_target(self, errlog: TextIO) -> Any:
        """A URL, or a stdio transport whose child writes its stderr to ``errlog``."""
        if self.url:
            return self.url
        # The child gets the SDK's default environment (PATH, HOME and the like), never the
        # service's own variables: no provider key or database URL reaches a tool server.
        return stdio_client(StdioServerParameters(command=self.command, args=list(self.args)), errlog=errlog)


@dataclass(frozen=True)
class McpToolInfo:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    # The server's own claim (its annotations) that the tool only reads and reaches nothing outside:
    # ``readOnlyHint`` true and ``openWorldHint`` false, both said (the protocol's defaults are the
    # opposite). Believed only for a server an editor trusts (tools/mcp.py).
    claims_read_only: bool = False


@dataclass(frozen=True)
class McpCallResult:
    """A tool's answer as text (its text blocks, else its structured content as JSON; other blocks
    are named, not dropped), and whether the tool reported an error."""

    text: str
    is_error: bool


def tools_list(target: McpTarget) -> list[McpToolInfo]:
    """Every tool the server lists (at most ``MAX_LIST_PAGES`` pages). Raises :class:`McpUnavailable`."""

    async def go(client: Client) -> list[McpToolInfo]:
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(
                McpToolInfo(
                    tool.name, tool.description or "", dict(tool.input_schema or {}), _claims_read_only(tool)
                )
                for tool in page.tools
            )
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    return _session(target, go)


def _claims_read_only(tool: Any) -> bool:
    hints = getattr(tool, "annotations", None)
    return hints is not None and hints.read_only_hint is True and hints.open_world_hint is False


def tool_call(target: McpTarget, name: str, arguments: dict[str, Any]) -> McpCallResult:
    """Call tool ``name``. Raises :class:`McpUnavailable`; a tool's own error is a result."""

    async def go(client: Client) -> McpCallResult:
        result = await client.call_tool(name, arguments, read_timeout_seconds=target.timeout_seconds)
        return McpCallResult(_result_text(result.content, result.structured_content), bool(result.is_error))

    return _session(target, go)


def _result_text(content: Sequence[Any], structured: Any) -> str:
    texts = [block.text for block in content if getattr(block, "type", None) == "text"]
    others = [
        str(getattr(block, "type", "unknown")) for block in content if getattr(block, "type", None) != "text"
    ]
    if not texts and structured is not None:
        texts = [json.dumps(structured, ensure_ascii=False, sort_keys=True)]
    if others:
        texts.append(f"[{len(others)} non-text block(s) not shown: {', '.join(sorted(set(others)))}]")
    return "\n".join(texts)


def _session(target: McpTarget, operation: Callable[[Client], Awaitable[T]]) -> T:
    async def bounded() -> T:
        async def inside() -> T:
            # A stdio server's own log may echo arguments and results, which leave this service only
            # redacted: it is discarded rather than copied into the worker's log unredacted.
            with open(os.devnull, "w") as discard:
                server = target.sdk_target(discard)
                async with Client(server, read_timeout_seconds=target.timeout_seconds, cache=None) as c:
                    return await operation(c)

        return await asyncio.wait_for(inside(), target.timeout_seconds + SESSION_SLACK_SECONDS)

    try:
        return _run(bounded)
    except BaseException as error:  # anyio groups what failed inside the session
        raise _unavailable(error) from error


def _run(coroutine: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        return await coroutine()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp") as pool:
        return pool.submit(asyncio.run, main()).result()


def _unavailable(error: BaseException) -> BaseException:
    """The one exception a failure leaves as: ``McpUnavailable`` naming its kind. Anything that is not
    an ``Exception`` (a KeyboardInterrupt, a worker's shutdown) is passed on as it is."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if not isinstance(error, Exception):
        return error
    if isinstance(error, TimeoutError):
        return McpUnavailable("the tool server did not answer in time")
    if isinstance(error, MCPError):
        if error.error.code == REQUEST_TIMEOUT:
            return McpUnavailable("the tool server did not answer in time")
        return McpUnavailable(f"the tool server answered with protocol error {error.error.code}")
    if isinstance(error, OSError):
        return McpUnavailable("the tool server's command could not be started")
    return McpUnavailable(f"the tool server could not be reached ({type(error).__name__})")
