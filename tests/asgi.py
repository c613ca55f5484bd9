"""Requests to the project's ASGI application in process (asgiref's communicator)."""

from __future__ import annotations

from typing import Any


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    """The ASGI scope of an HTTP request from a loopback client to ``testserver``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), *(headers or [])],
        "client": ("127.0.0.1", 40000),
        "server": ("testserver", 80),
    }
