"""The client address is validated wherever it is read: an unknown or malformed one is never stored as
text and never a 500, and the admin login lockout holds however ``X-Forwarded-For`` is spoofed."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from config.client_address import client_address
from config.settings import base

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"
PASSWORD = "pw-" + "editor-correct"
PROXY = "10.0.0.5"  # in PROXY_NETWORKS
PROXY_NETWORKS = ["10.0.0.0/8"]  # where the proxies of these tests connect from, as an operator names it
STRANGER = "192.0.2.50"  # a peer no proxy of ours vouches for


@pytest.fixture(autouse=True)
def proxy_networks(settings):
    settings.API_TRUSTED_PROXY_NETWORKS = PROXY_NETWORKS


@pytest.fixture
def editor():
    return User.objects.create_user(username="editor", password=PASSWORD, is_staff=True)


def log_in(client: Client, password: str, **extra: str):
    return client.post(LOGIN, {"username": "editor", "password": password}, **extra)


def address(proxies: int, settings, remote: str | None, forwarded: str | None = None) -> str | None:
    settings.API_TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/")
    if remote is None:
        del request.META["REMOTE_ADDR"]
    else:
        request.META["REMOTE_ADDR"] = remote
    if forwarded is not None:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_address(request)


@pytest.mark.parametrize(
    ("proxies", "remote", "forwarded", "expected"),
    [
        (0, "192.0.2.9", "198.51.100.7", "192.0.2.9"),  # no proxy: the header is never read
        (0, None, None, None),  # a Unix socket without a proxy
        (0, "", None, None),
        (0, "unknown", None, None),
        (0, "::ffff:192.0.2.9", None, "192.0.2.9"),
        (0, "2001:DB8::1", None, "2001:db8::1"),
        (1, PROXY, "203.0.113.1, 198.51.100.7", "198.51.100.7"),  # the right-most hop, not the client's
        (1, None, "198.51.100.7", "198.51.100.7"),  # a proxy on a Unix socket
        (1, STRANGER, "198.51.100.7", STRANGER),  # came round the proxy: its peer, not its header
        (1, PROXY, "not-an-ip", None),
        (1, PROXY, "198.51.100.7:4711", None),
        (1, PROXY, "", None),
        (1, PROXY, None, None),
        (2, PROXY, "198.51.100.7, 10.0.0.9", "198.51.100.7"),
        (2, PROXY, "198.51.100.7, 203.0.113.1", "203.0.113.1"),  # the inner hop is no proxy of ours
        (2, PROXY, "198.51.100.7", "198.51.100.7"),  # no second proxy: the first hop is no proxy
        (2, PROXY, "10.0.0.9", None),  # the chain ends at a proxy: whom it served is unknown
    ],
)
def test_the_client_address_is_an_address_or_none(settings, proxies, remote, forwarded, expected):
    assert address(proxies, settings, remote, forwarded) == expected


def test_a_login_without_a_peer_address_is_counted_as_null_and_still_locks_out(editor):
    socket = Client(REMOTE_ADDR="")

    statuses = [log_in(socket, "wrong-" + str(n)).status_code for n in range(5)]

    assert statuses == [200, 200, 200, 200, 429]
    attempt = AccessAttempt.objects.get()
    assert (attempt.username, attempt.ip_address, attempt.failures_since_start) == ("editor", None, 5)
    assert log_in(socket, PASSWORD).status_code == 429
    assert "_auth_user_id" not in socket.session


def test_a_malformed_forwarded_address_is_no_500_and_stores_no_text(editor, settings):
    settings.API_TRUSTED_PROXIES = 1

    response = log_in(Client(REMOTE_ADDR=PROXY), "wrong", HTTP_X_FORWARDED_FOR="not-an-ip")

    assert response.status_code == 200
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == [None]


@pytest.mark.parametrize(
    ("remote", "forwarded"),
    [
        # Straight to the service, a new "client" address in the header on every attempt.
        (STRANGER, "198.51.100.{n}"),
        # Through the proxy, a new garbage hop on every attempt.
        (PROXY, "not-an-ip-{n}"),
    ],
)
def test_changing_the_forwarded_address_on_every_attempt_does_not_escape_the_lockout(
    editor, settings, remote, forwarded
):
    settings.API_TRUSTED_PROXIES = 1
    client = Client(REMOTE_ADDR=remote)

    statuses = [
        log_in(client, "wrong-" + str(n), HTTP_X_FORWARDED_FOR=forwarded.format(n=n)).status_code
        for n in range(5)
    ]
    locked = log_in(client, PASSWORD, HTTP_X_FORWARDED_FOR=forwarded.format(n=99))

    assert statuses == [200, 200, 200, 200, 429]
    assert locked.status_code == 429
    assert AccessAttempt.objects.count() == 1


def test_through_the_proxy_each_client_keeps_its_own_count(editor, settings):
    settings.API_TRUSTED_PROXIES = 1
    proxy = Client(REMOTE_ADDR=PROXY)
    for n in range(5):
        log_in(proxy, "wrong-" + str(n), HTTP_X_FORWARDED_FOR=f"203.0.113.{n}, 198.51.100.7")

    assert log_in(proxy, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7").status_code == 429
    assert log_in(proxy, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.8").status_code == 302
    assert AccessAttempt.objects.get().ip_address == "198.51.100.7"


@pytest.mark.parametrize("remote", ["127.0.0.1", "::1", PROXY, "192.168.1.20"])
def test_a_proxy_count_alone_trusts_no_peer_so_a_direct_client_cannot_rotate_out_of_the_lockout(
    editor, settings, remote
):
    # The shipped default names no proxy network: a client that reaches the service directly, from
    # this host or a private network, is counted at its own address whatever it writes.
    assert base.API_TRUSTED_PROXY_NETWORKS == []
    settings.API_TRUSTED_PROXY_NETWORKS = base.API_TRUSTED_PROXY_NETWORKS
    settings.API_TRUSTED_PROXIES = 1
    client = Client(REMOTE_ADDR=remote)

    statuses = [
        log_in(client, "wrong-" + str(n), HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code
        for n in range(5)
    ]

    assert statuses == [200, 200, 200, 200, 429]
    assert log_in(client, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.99").status_code == 429
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == [remote]
