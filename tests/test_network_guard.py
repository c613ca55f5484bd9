"""The suite's network guard refuses non-loopback connections before any packet is sent."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from tests import network_guard
from tests.network_guard import NetworkGuardViolation, expect_refusal


@pytest.fixture(autouse=True)
def guard():
    network_guard.install()  # idempotent; also active when the plugin is registered
    yield
    network_guard.drain()


@pytest.mark.parametrize(
    "address", [("192.0.2.1", 9), ("10.0.0.1", 80), ("8.8.8.8", 53)], ids=["test-net", "private", "public"]
)
def test_connection_to_a_non_loopback_address_is_refused(address):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)  # without the guard this would hang, then fail as a timeout, not a refusal
        with expect_refusal(), pytest.raises(NetworkGuardViolation):
            sock.connect(address)


def test_ipv6_non_loopback_and_connect_ex_are_refused():
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        with expect_refusal(), pytest.raises(NetworkGuardViolation):
            sock.connect_ex(("2001:db8::1", 9, 0, 0))


def test_resolving_a_remote_name_is_refused():
    with expect_refusal(), pytest.raises(NetworkGuardViolation):
        socket.getaddrinfo("example.com", 443)


def test_a_refusal_is_recorded_for_the_tests_report():
    with socket.socket() as sock, pytest.raises(NetworkGuardViolation):
        sock.connect(("192.0.2.1", 9))
    assert network_guard.drain() == [
        "network access outside loopback refused: connection to ('192.0.2.1', 9)"
    ]


def test_a_passing_report_with_violations_becomes_a_failure():
    report = SimpleNamespace(outcome="passed", longrepr=None)
    network_guard.fail_report(report, ["network access outside loopback refused: connection to x"])
    assert (report.outcome, report.longrepr) == (
        "failed",
        "network access outside loopback refused: connection to x",
    )
    clean = SimpleNamespace(outcome="passed", longrepr=None)
    network_guard.fail_report(clean, [])
    assert clean.outcome == "passed"


def test_loopback_and_unix_sockets_are_allowed(tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=2):
            pass
        with socket.create_connection(("localhost", server.getsockname()[1]), timeout=2):
            pass
    path = str(tmp_path / "guard.sock")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        server.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
    assert network_guard.drain() == []


@pytest.mark.parametrize(
    ("host", "local"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("::ffff:127.0.0.1", True), ("localhost", True),
     ("192.0.2.1", False), ("::ffff:10.0.0.1", False), ("fc00::1", False), ("github.com", False)],
)  # fmt: skip
def test_only_loopback_hosts_count_as_local(host, local):
    assert network_guard.is_local_host(host) is local
