"""Admin pages refuse non-staff users and forms without a CSRF token, and store nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from snippets.models import Snippet

pytestmark = pytest.mark.django_db

PAGES = [
    "/admin/",
    "/admin/snippets/snippet/",
    "/admin/skills/skill/",
    "/admin/catalog/configuration/",
    "/admin/catalog/provider/",
    "/admin/governance/governanceevent/",
    "/admin/governance/governanceevent/readiness/",
]


@pytest.mark.parametrize("page", PAGES)
def test_non_staff_users_are_sent_to_the_login_page(client, django_user_model, page):
    user = django_user_model.objects.create_user("visitor", password="pw-for-tests")
    client.force_login(user)
    response = client.get(page)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_admin_form_without_csrf_token_is_refused_and_stores_nothing(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post(
        "/admin/snippets/snippet/add/",
        {
            "identifier": "x",
            "name": "X",
            "text": "t",
            "data_class": "public_content",
            "ceiling": "external_global",
        },
    )
    assert response.status_code == 403
    assert b"CSRF" in response.content
    assert Snippet.objects.count() == 0
