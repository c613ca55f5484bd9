"""A loopback imitation of the three GitHub endpoints the skill ingest uses, recording every request.

- ``GET api.github.com/repos/{o}/{r}/commits/{ref}`` → ``{"sha": ...}``
- ``GET api.github.com/repos/{o}/{r}/git/trees/{sha}?recursive=1`` → ``{"sha", "tree": [...], "truncated"}``
- ``GET raw.githubusercontent.com/{o}/{r}/{sha}/{path}`` → the file's bytes

:class:`LoopbackTransport` is the test-only way in: the client under test keeps its https and allow-list
checks on the original URL, and this transport then serves the allow-listed host names from 127.0.0.1 over
plain HTTP, passing the original host in the ``Host`` header. It records every request it carries, so a
test can assert that a refused URL never reached any connection.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx


@dataclass(frozen=True)
class Recorded:
    host: str
    path: str  # with the query string
    authorization: str | None


@dataclass
class FakeGitHub:
    refs: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (owner, repo, ref) -> sha
    trees: dict[str, dict[str, bytes]] = field(default_factory=dict)  # sha -> path -> content
    symlinks: dict[str, set[str]] = field(default_factory=dict)  # sha -> paths listed as mode 120000
    truncated: set[str] = field(default_factory=set)
    overrides: dict[str, tuple[int, dict[str, str]]] = field(
        default_factory=dict
    )  # path -> (status, headers)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    # --- scripting ---------------------------------------------------------------------------------

    def commit(self, owner: str, repo: str, files: dict[str, bytes], *, ref: str = "main") -> str:
        """Store a commit with ``files`` and point ``ref`` (and HEAD) at it; returns its SHA."""
        digest = hashlib.sha1(repr((owner, repo, sorted(files.items()))).encode()).hexdigest()
        self.trees[digest] = dict(files)
        self.refs[(owner, repo, ref)] = digest
        self.refs[(owner, repo, "HEAD")] = digest
        return digest

    def api_paths(self) -> list[str]:
        return [r.path for r in self.requests if r.host == "api.github.com"]

    def raw_paths(self) -> list[str]:
        return [r.path for r in self.requests if r.host == "raw.githubusercontent.com"]

    # --- lifecycle ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "start the fake first"
        return self._server.server_address[1]

    def __enter__(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def transport(self) -> LoopbackTransport:
        return LoopbackTransport(self.port)

    # --- serving -----------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        host = handler.headers.get("Host", "")
        with self._lock:
            self.requests.append(Recorded(host, handler.path, handler.headers.get("Authorization")))
        split = urlsplit(handler.path)
        if split.path in self.overrides:
            status, headers = self.overrides[split.path]
            return _send(handler, status, b"", headers)
        parts = [unquote(part) for part in split.path.split("/") if part]
        if host == "api.github.com":
            return self._api(handler, parts)
        if host == "raw.githubusercontent.com" and len(parts) >= 4:
            content = self.trees.get(parts[2], {}).get("/".join(parts[3:]))
            return (
                _send(handler, 200, content)
                if content is not None
                else _send(handler, 404, b"404: Not Found")
            )
        return _send(handler, 404, b"{}")

    def _api(self, handler: BaseHTTPRequestHandler, parts: list[str]) -> None:
        if len(parts) == 5 and parts[0] == "repos" and parts[3] == "commits":
            sha = self.refs.get((parts[1], parts[2], parts[4]))
            if sha is None:
                return _send(handler, 404, b'{"message": "No commit found for SHA"}')
            return _send_json(handler, {"sha": sha, "commit": {"message": "fake"}})
        if len(parts) == 6 and parts[0] == "repos" and parts[3:5] == ["git", "trees"]:
            sha = parts[5]
            if sha not in self.trees:
                return _send(handler, 404, b'{"message": "Not Found"}')
            entries = [
                {"path": path, "mode": "100644", "type": "blob", "sha": "0" * 40, "size": len(content)}
                for path, content in sorted(self.trees[sha].items())
            ]
            entries += [
                {"path": path, "mode": "120000", "type": "blob", "sha": "0" * 40, "size": 10}
                for path in sorted(self.symlinks.get(sha, ()))
            ]
            return _send_json(handler, {"sha": sha, "tree": entries, "truncated": sha in self.truncated})
        return _send(handler, 404, b'{"message": "Not Found"}')


def _send_json(handler: BaseHTTPRequestHandler, data: Any) -> None:
    _send(handler, 200, json.dumps(data).encode(), {"Content-Type": "application/json"})


def _send(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class LoopbackTransport(httpx.BaseTransport):
    """Serves https://<allow-listed host>/... from http://127.0.0.1:<port>/... (tests only)."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._inner = httpx.HTTPTransport()
        self.carried: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.carried.append(str(request.url))
        original_host = request.url.host
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=self._port)
        request.headers["Host"] = original_host
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()
