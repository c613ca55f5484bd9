"""Admin login locks a username out from an address after repeated failures (django-axes)."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"
PASSWORD = "pw-" + "editor-correct"


@pytest.fixture
def editor():
    return User.objects.create_user(username="editor", password=PASSWORD, is_staff=True)


def log_in(client: Client, password: str, **extra: str):
    return client.post(LOGIN, {"username": "editor", "password": password}, **extra)


def test_repeated_failures_lock_out_even_the_right_password_until_reset(client, editor, settings):
    assert (settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME.total_seconds()) == (5, 900)

    statuses = [log_in(client, "wrong-" + str(n)).status_code for n in range(5)]
    assert statuses == [200, 200, 200, 200, 429]

    locked = log_in(client, PASSWORD)
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    assert log_in(client, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.9").status_code == 429

    call_command("axes_reset_username", "editor", stdout=io.StringIO())
    unlocked = log_in(client, PASSWORD)
    assert (unlocked.status_code, unlocked["Location"]) == (302, "/admin/")
    assert client.session["_auth_user_id"] == str(editor.pk)


def test_a_lockout_holds_for_one_address_and_does_not_lock_the_editor_out_elsewhere(client, editor):
    for n in range(5):
        log_in(client, "wrong-" + str(n))

    assert log_in(client, PASSWORD).status_code == 429
    elsewhere = Client(REMOTE_ADDR="192.0.2.44")
    assert log_in(elsewhere, PASSWORD).status_code == 302
