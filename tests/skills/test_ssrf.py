"""Skill source URLs that point anywhere but GitHub are refused before any connection is attempted."""

from __future__ import annotations

import socket

import httpx
import pytest

from skills.errors import GitHubRedirectRefused, GitHubUrlRefused, SkillFetchError
from skills.ingest.github_http import GitHubClient
from skills.ingest.snapshot import Deadline

PUBLIC_GITHUB_ADDRESS = "140.82.112.3"


class Network:
    """Records every resolution and connection attempt; answers resolutions from ``answers``."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.resolved: list[str] = []
        self.connected: list[object] = []

    def getaddrinfo(self, host, port, *args, **kwargs):
        self.resolved.append(host)
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "not known to the test")
        return [
            (socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
            for ip in self.answers[host]
        ]

    def connect(self, sock, address):
        self.connected.append(address)
        raise ConnectionRefusedError("connections are refused in this test")


@pytest.fixture
def network(monkeypatch) -> Network:
    fake = Network()
    monkeypatch.setattr(socket, "getaddrinfo", fake.getaddrinfo)
    # Functions, not bound methods: they are installed on the class and receive the socket as ``self``.
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: fake.connect(sock, address))
    monkeypatch.setattr(socket.socket, "connect_ex", lambda sock, address: fake.connect(sock, address))
    return fake


def fetch(url: str, transport: httpx.BaseTransport | None = None) -> bytes:
    with GitHubClient(token=None, deadline=Deadline(10), transport=transport) as client:
        return client.get_bytes(url, limit=1024)


REFUSED_URLS = [
    "https://127.0.0.1/owner/repo",
    "https://127.1.2.3/owner/repo",
    "https://localhost/owner/repo",
    "https://10.0.0.8/owner/repo",
    "https://172.16.0.1/owner/repo",
    "https://172.31.255.254/owner/repo",
    "https://192.168.1.10/owner/repo",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/owner/repo",
    "https://[fc00::1]/owner/repo",
    "https://[fd12:3456::1]/owner/repo",
    "https://[::ffff:127.0.0.1]/owner/repo",
    "https://0x7f000001/owner/repo",
    "https://2130706433/owner/repo",
    "http://github.com/owner/repo",
    "ftp://github.com/owner/repo",
    "file:///etc/passwd",
    "gopher://github.com/owner/repo",
    "https://user:secret@github.com/owner/repo",
    "https://github.com@10.0.0.8/owner/repo",
    "https://github.com:8443/owner/repo",
    "https://github.com.internal.example/owner/repo",
    "https://api.github.com.10.0.0.8.nip.io/repos/x",
    "//github.com/owner/repo",
    "not a url",
]


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_non_github_urls_are_refused_before_resolving_or_connecting(network, url):
    with pytest.raises(GitHubUrlRefused):
        fetch(url)
    assert network.resolved == []
    assert network.connected == []


PRIVATE_ANSWERS = {
    "loopback": ["127.0.0.1"],
    "private_10": ["10.1.2.3"],
    "private_172": ["172.20.0.5"],
    "private_192": ["192.168.0.1"],
    "link_local_metadata": ["169.254.169.254"],
    "unspecified": ["0.0.0.0"],
    "ipv6_loopback": ["::1"],
    "ipv6_unique_local": ["fd00::7"],
    "ipv6_mapped_loopback": ["::ffff:127.0.0.1"],
    "shared_address_space": ["100.64.0.1"],
    "one_private_among_public": [PUBLIC_GITHUB_ADDRESS, "10.0.0.1"],
}


@pytest.mark.parametrize("answer", PRIVATE_ANSWERS.values(), ids=PRIVATE_ANSWERS.keys())
def test_allow_listed_name_resolving_to_a_non_public_address_is_refused_before_connecting(network, answer):
    network.answers["raw.githubusercontent.com"] = answer
    with pytest.raises(GitHubUrlRefused) as refused:
        fetch("https://raw.githubusercontent.com/owner/repo/abc123/SKILL.md")
    assert refused.value.code == "github_url_refused"
    assert network.resolved == ["raw.githubusercontent.com"]
    assert network.connected == []


def test_name_that_does_not_resolve_is_a_fetch_error_without_a_connection(network):
    with pytest.raises(SkillFetchError) as failed:
        fetch("https://api.github.com/repos/owner/repo")
    assert type(failed.value) is SkillFetchError
    assert network.connected == []


def test_public_address_passes_the_check_and_reaches_the_connection_attempt(network):
    network.answers["api.github.com"] = [PUBLIC_GITHUB_ADDRESS]
    with pytest.raises(SkillFetchError):
        fetch("https://api.github.com/repos/owner/repo")
    assert network.resolved[0] == "api.github.com"
    assert [address[0] for address in network.connected] == [PUBLIC_GITHUB_ADDRESS]  # type: ignore[index]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_to_an_internal_address_is_refused_and_never_followed(status):
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(status, headers={"Location": "http://169.254.169.254/latest/meta-data/"})

    with pytest.raises(GitHubRedirectRefused):
        fetch("https://api.github.com/repos/owner/repo", transport=httpx.MockTransport(handler))
    assert seen == ["https://api.github.com/repos/owner/repo"]
