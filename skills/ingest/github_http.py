"""The only HTTP client that talks to GitHub. Every URL is checked before any connection is made.

Rules (each refusal is a typed error, raised before anything is sent):

- https only; the host must be one of :data:`ALLOWED_HOSTS` (exact, case-insensitive), on the default
  port; a URL carrying credentials (``user:pass@``) is refused;
- the host name is resolved first and refused when any address it resolves to is not global (loopback,
  private, link-local, unique-local, reserved): an allow-listed name must never lead to an internal
  service (SSRF through a poisoned resolver or hosts file). The connection resolves the name again, so
  this narrows, but does not close, a DNS-rebinding window;
- redirects are never followed: any 3xx answer is :class:`GitHubRedirectRefused`;
- explicit timeouts, never longer than what is left of the sync's time budget; bodies are read in
  chunks and refused past a byte cap;
- the environment is not consulted (``trust_env=False``): no proxy variables, no ``.netrc`` credentials;
- the token (if any) goes in the ``Authorization`` header only, and is never logged or put in an error.

``transport`` exists for tests: a loopback test server is reached by injecting an ``httpx`` transport that
serves the allow-listed host names locally. The URL checks above still run on the original URL; the
address check runs only without an injected transport (the names are then never resolved). Production
passes no transport, so httpx's default TLS transport (certificate verification on) is used.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from typing import Any

import httpx

from skills.errors import (
    GitHubAccessDenied,
    GitHubNotFound,
    GitHubRedirectRefused,
    GitHubResponseInvalid,
    GitHubUrlRefused,
    SkillFetchError,
)
from skills.ingest.snapshot import Deadline

ALLOWED_HOSTS = frozenset(
    {"github.com", "api.github.com", "raw.githubusercontent.com", "codeload.github.com"}
)
REQUEST_TIMEOUT_SECONDS = 15.0
CHUNK_BYTES = 64 * 1024
USER_AGENT = "governed-context-skill-ingest"


def check_url(url: str) -> httpx.URL:
    """The parsed URL when it may be fetched; raises :class:`GitHubUrlRefused` otherwise."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        raise GitHubUrlRefused("The URL cannot be parsed.") from None
    if parsed.scheme != "https":
        raise GitHubUrlRefused(f"Only https URLs are fetched, not {parsed.scheme or 'scheme-less'} ones.")
    if parsed.userinfo:
        raise GitHubUrlRefused("URLs carrying credentials are refused; name a token variable on the source.")
    host = parsed.host.lower()
    if host not in ALLOWED_HOSTS:
        raise GitHubUrlRefused(
            f"Host {host[:100]!r} is not on the GitHub allow-list.", extra={"host": host[:100]}
        )
    if parsed.port not in (None, 443):
        raise GitHubUrlRefused("Only the default https port is allowed.")
    return parsed


def check_addresses(host: str) -> None:
    """Resolve ``host`` and refuse it unless every address is global. Raises before any connection."""
    try:
        resolved = socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise SkillFetchError(f"Host {host[:100]!r} could not be resolved.") from None
    for _family, _type, _proto, _name, address in resolved:
        ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])
        if not ip.is_global:
            raise GitHubUrlRefused(
                f"Host {host[:100]!r} resolves to a non-public address.", extra={"host": host[:100]}
            )


class GitHubClient:
    """A short-lived client for one sync. Use as a context manager."""

    def __init__(
        self,
        *,
        token: str | None,
        deadline: Deadline,
        transport: httpx.BaseTransport | None = None,
        request_timeout: float = REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        self._token = token
        self._deadline = deadline
        self._request_timeout = request_timeout
        self._check_addresses = transport is None
        self._client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._client.close()

    def get_json(self, url: str, *, limit: int) -> Any:
        raw = self.get_bytes(url, limit=limit, accept="application/vnd.github+json")
        try:
            return json.loads(raw)
        except ValueError:
            raise GitHubResponseInvalid("GitHub answered with a body that is not JSON.") from None

    def get_bytes(self, url: str, *, limit: int, accept: str = "application/octet-stream") -> bytes:
        """The body of a 200 answer, at most ``limit`` bytes. Raises the typed errors of the module
        docstring, :class:`GitHubNotFound` for a 404, and ``DeadlineExceeded`` when no time is left."""
        parsed = check_url(url)
        if self._check_addresses:
            check_addresses(parsed.host)
        remaining = self._deadline.check()
        headers = {"Accept": accept, "User-Agent": USER_AGENT, "X-GitHub-Api-Version": "2022-11-28"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        timeout = httpx.Timeout(min(self._request_timeout, remaining))
        try:
            with self._client.stream("GET", parsed, headers=headers, timeout=timeout) as response:
                _check_status(response)
                return _read_capped(response, limit)
        except httpx.TimeoutException:
            raise SkillFetchError("GitHub did not answer in time.") from None
        except httpx.HTTPError as exc:
            raise SkillFetchError(f"GitHub request failed ({type(exc).__name__}).") from None


def _check_status(response: httpx.Response) -> None:
    status = response.status_code
    if status == 200:
        return
    if 300 <= status < 400:
        raise GitHubRedirectRefused(f"GitHub answered {status} (a redirect); redirects are not followed.")
    if status == 404:
        raise GitHubNotFound("GitHub answered 404 (not found).")
    if status in (401, 403, 429):
        reset = response.headers.get("x-ratelimit-reset", "")
        limited = response.headers.get("x-ratelimit-remaining") == "0" or status == 429
        message = f"GitHub refused access ({status})" + (
            f": rate limit exhausted until epoch {reset[:20]}" if limited else ""
        )
        raise GitHubAccessDenied(message + ".")
    raise GitHubResponseInvalid(f"GitHub answered {status}.")


def _read_capped(response: httpx.Response, limit: int) -> bytes:
    body = bytearray()
    for chunk in response.iter_bytes(CHUNK_BYTES):
        body += chunk
        if len(body) > limit:
            raise GitHubResponseInvalid(f"GitHub answered with more than {limit} bytes.")
    return bytes(body)
