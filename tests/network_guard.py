"""A pytest plugin that fails any test connecting anywhere but this machine.

Registered with ``pytest_plugins = ["tests.network_guard"]``. It installs an audit hook
(:func:`sys.addaudithook`) for ``socket.connect`` (which also covers ``connect_ex``), raised by CPython
before the connection is attempted, so a refused connection sends no packet. Loopback
(127.0.0.0/8, ``::1``, ``::ffff:127.x``), ``localhost`` and unix sockets are allowed. Python-level
``socket.getaddrinfo`` calls for other names are refused too (a DNS query is network access).

A refusal raises :class:`NetworkGuardViolation` in the code that connected *and* fails the test's
report, so a caller that swallows connection errors cannot hide it. Limits: an audit hook cannot be
removed, so once installed it stays for the process; connections made by C libraries (libpq) or by
subprocesses are not seen; CPython resolves a host *name* passed to ``connect`` before the audit event.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

_state = threading.local()
_violations: list[str] = []
_installed = False


class NetworkGuardViolation(ConnectionRefusedError):
    """A test tried to reach a non-loopback address."""


def is_local_host(host: object) -> bool:
    if not isinstance(host, str):
        return False
    name = host.split("%", 1)[0].strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def is_allowed(family: int, address: Any) -> bool:
    if family not in (socket.AF_INET, socket.AF_INET6):
        return True  # unix sockets, netlink, ...: never leave the machine
    return isinstance(address, tuple) and bool(address) and is_local_host(address[0])


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        sock, address = args
        if not is_allowed(sock.family, address):
            _refuse(f"connection to {address!r}")
    elif event == "socket.getaddrinfo":
        host = args[0]
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if host is not None and not is_local_host(host) and not _is_literal(host):
            _refuse(f"name resolution of {host!r}")


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _refuse(what: str) -> None:
    message = f"network access outside loopback refused: {what}"
    if not getattr(_state, "expected", False):
        _violations.append(message)
    raise NetworkGuardViolation(message)


def install() -> None:
    """Install the audit hook once per process (it cannot be removed)."""
    global _installed
    if not _installed:
        sys.addaudithook(_audit)
        _installed = True


@contextmanager
def expect_refusal() -> Iterator[None]:
    """Within this block a refusal still raises but is not held against the test (for the guard's own tests)."""
    _state.expected = True
    try:
        yield
    finally:
        _state.expected = False


def drain() -> list[str]:
    """The violations recorded since the last drain."""
    taken = list(_violations)
    del _violations[: len(taken)]
    return taken


def fail_report(report: Any, violations: list[str]) -> None:
    """Turn a passing report into a failure naming the violations."""
    if violations and report.outcome == "passed":
        report.outcome = "failed"
        report.longrepr = "\n".join(violations)


def pytest_configure(config: pytest.Config) -> None:
    install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    fail_report(outcome.get_result(), drain())  # type: ignore[attr-defined]
