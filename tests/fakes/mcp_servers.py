"""Real MCP servers for tests (tests/fakes/mcp_server.py, built with the ``mcp`` SDK), started as
subprocesses on loopback, and the rows that register them."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from governance.vocabulary import DataClass, TrustZone
from tools.models import McpServer, McpTransport

SERVER_SCRIPT = Path(__file__).resolve().parent / "mcp_server.py"
START_PATIENCE_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stdio_args(secret_file: Path | None = None, extra_tools: Path | None = None) -> list[str]:
    return [
        str(SERVER_SCRIPT),
        *(["--secret-file", str(secret_file)] if secret_file else []),
        *(["--extra-tools", str(extra_tools)] if extra_tools else []),
    ]


class HttpMcpServer:
    """A streamable HTTP MCP server on a free loopback port (``url``), in a subprocess; stopped when
    the ``with`` block ends, or earlier by :meth:`stop` (then nothing listens at ``url``)."""

    def __init__(self, secret_file: Path | None = None, extra_tools: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.secret_file = secret_file
        self.extra_tools = extra_tools
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HttpMcpServer:
        self.process = subprocess.Popen(
            [sys.executable, *stdio_args(self.secret_file, self.extra_tools), "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_listening(self.process, self.port)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_listening(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_PATIENCE_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP test server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the MCP test server did not start listening")


def http_server_make(
    url: str,
    *,
    name: str = "tools",
    zone: str = TrustZone.LOCAL,
    data_class: str = DataClass.INTERNAL_CONFIGURATION,
    timeout_seconds: float = 5.0,
    annotations_trusted: bool = False,
) -> McpServer:
    server = McpServer(
        name=name,
        transport=McpTransport.STREAMABLE_HTTP,
        url=url,
        trust_zone=zone,
        data_class=data_class,
        timeout_seconds=timeout_seconds,
        annotations_trusted=annotations_trusted,
    )
    server.full_clean()
    server.save()
    return server


def stdio_server_make(
    *,
    name: str = "local-tools",
    secret_file: Path | None = None,
    zone: str = TrustZone.LOCAL,
    data_class: str = DataClass.INTERNAL_CONFIGURATION,
) -> McpServer:
    server = McpServer(
        name=name,
        transport=McpTransport.STDIO,
        command=sys.executable,
        args=stdio_args(secret_file),
        trust_zone=zone,
        data_class=data_class,
        timeout_seconds=20.0,
    )
    server.full_clean()
    server.save()
    return server
