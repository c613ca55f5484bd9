"""On PostgreSQL, django-axes stores the client address in an ``inet`` column: a login whose address
cannot be known (a Unix socket without REMOTE_ADDR, a proxy passing garbage) is stored as NULL,
never as text the column refuses with a 500."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

pytestmark = [pytest.mark.services, pytest.mark.django_db]

LOGIN = "/admin/login/?next=/admin/"


def test_logins_without_a_valid_address_are_stored_as_null_in_the_inet_column(settings):
    assert connection.vendor == "postgresql"
    User.objects.create_user(username="editor", password="pw-" + "editor-correct", is_staff=True)
    credentials = {"username": "editor", "password": "wrong"}

    no_peer = Client(REMOTE_ADDR="").post(LOGIN, credentials)
    settings.API_TRUSTED_PROXIES = 1
    settings.API_TRUSTED_PROXY_NETWORKS = ["10.0.0.0/8"]  # where the proxy connects from
    garbage = Client(REMOTE_ADDR="10.0.0.5").post(LOGIN, credentials, HTTP_X_FORWARDED_FOR="not-an-ip")
    proxied = Client(REMOTE_ADDR="10.0.0.5").post(LOGIN, credentials, HTTP_X_FORWARDED_FOR="2001:db8::7")

    assert (no_peer.status_code, garbage.status_code, proxied.status_code) == (200, 200, 200)
    assert sorted(AccessAttempt.objects.values_list("ip_address", "failures_since_start"), key=str) == [
        ("2001:db8::7", 1),
        (None, 2),
    ]
