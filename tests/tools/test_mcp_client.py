"""The MCP client from synchronous code (tools/mcp_client.py): it works where an event loop
already runs, and every failure leaves as one McpUnavailable naming its kind."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from tests.fakes.mcp_servers import HttpMcpServer, stdio_args
from tools.mcp_client import McpTarget, McpUnavailable, tool_call, tools_list


@pytest.fixture(scope="module")
def http_mcp():
    with HttpMcpServer() as server:
        yield server


def test_a_call_from_inside_a_running_event_loop_runs_on_its_own_thread(http_mcp):
    target = McpTarget(url=http_mcp.url, timeout_seconds=5)

    async def from_a_loop() -> str:
        return tool_call(target, "add", {"a": 2, "b": 40}).text

    assert asyncio.run(from_a_loop()) == "42"


def test_a_tools_own_error_is_a_result_not_a_failure(http_mcp):
    result = tool_call(McpTarget(url=http_mcp.url, timeout_seconds=5), "no_such_tool", {})
    assert (result.text, result.is_error) == ("Unknown tool: no_such_tool", True)


def test_a_command_that_does_not_exist_is_unavailable():
    with pytest.raises(McpUnavailable) as failure:
        tools_list(McpTarget(command="/nonexistent/mcp-server", timeout_seconds=2))
    assert str(failure.value) == "the tool server's command could not be started"


def test_a_stdio_server_answers():
    target = McpTarget(command=sys.executable, args=tuple(stdio_args()), timeout_seconds=20)
    assert tool_call(target, "echo", {"text": "hi"}).text == "echo: hi"


def test_a_server_that_accepts_and_never_answers_is_cut_off_by_the_outer_cap():
    with socket.socket() as silent:  # listens (the kernel accepts connections), never reads or answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        with pytest.raises(McpUnavailable) as failure:
            tools_list(McpTarget(url=url, timeout_seconds=0.5))
    assert str(failure.value) == "the tool server did not answer in time"
