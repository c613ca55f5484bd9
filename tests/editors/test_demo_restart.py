"""``make run`` twice: the second start seeds over whatever was done with the first one's demo.

``make run`` runs ``migrate`` then ``seed_demo`` before serving. Between two starts a newcomer follows
the README (a run with the demo token, eager mode), an editor edits a demo snippet, and staff add a
client; the second start must succeed, rotate the credentials and keep all of that.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.http import HttpRequest
from django.test import Client

from agents.models import AgentRun, RunStatus
from catalog.models import ApiClient
from catalog.services import api_client_create
from editors.demo import DEMO_CONFIGURATION
from governance.actors import Actor
from skills.models import Skill
from snippets.models import Snippet
from snippets.services import snippet_save
from tests.editor_accounts import editor_make

pytestmark = pytest.mark.django_db

EDITED_TEXT = "Warm, direct, brief, and always in the second person."


def make_run_steps() -> dict[str, str]:
    """``make run`` before it serves: migrate, then seed; returns the printed credentials."""
    call_command("migrate", "--noinput", verbosity=0)
    out = StringIO()
    call_command("seed_demo", stdout=out)
    lines = [line.split(":", 1) for line in out.getvalue().splitlines() if ":" in line]
    return {label.strip(): value.strip() for label, value in lines}


def api(token: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {token}"})


def test_a_second_start_rotates_the_credentials_and_keeps_runs_edits_and_clients(
    django_capture_on_commit_callbacks,
):
    first = make_run_steps()
    with django_capture_on_commit_callbacks(execute=True):
        created = api(first["API token"]).post(
            "/api/v1/runs",
            {"configuration": DEMO_CONFIGURATION, "input": "Draft a launch note."},
            content_type="application/json",
        )
    assert created.status_code == 202, created.content
    run = AgentRun.objects.get(pk=created.json()["id"])
    assert run.status == RunStatus.COMPLETED
    snippet = Snippet.objects.get(identifier="tone-of-voice")
    snippet.text = EDITED_TEXT
    snippet_save(snippet=snippet, actor=Actor.of_user(editor_make()), reason="house tone")
    house_style = Skill.objects.get(name="house-style")
    house_style.is_enabled = False
    house_style.save(update_fields=["is_enabled"])
    Snippet.objects.filter(identifier="legal-disclaimer").delete()
    api_client_create(name="shop", scopes=["runs:read"])
    ApiClient.objects.filter(name="demo-client").update(scopes=["runs:read"], is_active=False)
    demo_client_pk = ApiClient.objects.get(name="demo-client").pk
    versions = Snippet.objects.get(identifier="tone-of-voice").history.count()

    second = make_run_steps()

    assert api(first["API token"]).get(f"/api/v1/runs/{run.id}").status_code == 401
    detail = api(second["API token"]).get(f"/api/v1/runs/{run.id}")
    assert detail.status_code == 200, detail.content
    assert detail.json()["status"] == "completed"
    assert AgentRun.objects.get(pk=run.pk).api_client.pk == demo_client_pk
    assert authenticate(HttpRequest(), username="admin", password=first["admin password"]) is None
    assert authenticate(HttpRequest(), username="admin", password=second["admin password"]) is not None
    assert Snippet.objects.get(identifier="tone-of-voice").text == EDITED_TEXT
    assert Skill.objects.get(name="house-style").is_enabled is False
    assert sorted(ApiClient.objects.values_list("name", flat=True)) == ["demo-client", "shop"]
    listing = api(second["API token"]).get("/api/v1/configurations")
    assert [row["identifier"] for row in listing.json()["results"]] == [
        "demo-approvals",
        DEMO_CONFIGURATION,
        "demo-embeddings",
        "demo-external",
    ]
    assert sorted(Snippet.objects.values_list("identifier", flat=True)) == [
        "incident-runbook",
        "legal-disclaimer",
        "tone-of-voice",
    ]
    history = Snippet.objects.get(identifier="tone-of-voice").history
    assert (history.count(), history.first().history_change_reason) == (versions, "house tone")


def test_a_second_start_unlocks_the_demo_admin_so_the_printed_password_works(client):
    make_run_steps()
    login = "/admin/login/?next=/admin/"
    statuses = [
        client.post(login, {"username": "admin", "password": f"wrong-{n}"}).status_code for n in range(5)
    ]
    assert statuses == [200, 200, 200, 200, 429]

    second = make_run_steps()

    answer = client.post(login, {"username": "admin", "password": second["admin password"]})
    assert (answer.status_code, answer["Location"]) == (302, "/admin/")
