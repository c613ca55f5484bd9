"""seed_demo and create_api_client print what is shown once and store only digests."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.http import HttpRequest

from catalog.models import ApiClient, Configuration, LlmModel, Provider
from catalog.scopes import SCOPES
from skills.models import Skill
from snippets.models import Snippet

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def printed(output: str, label: str) -> str:
    line = next(line for line in output.splitlines() if line.strip().startswith(label))
    return line.split(":", 1)[1].strip()


def test_seed_demo_creates_the_offline_demo_and_prints_working_credentials():
    output = run("seed_demo")
    password = printed(output, "admin password")
    token = printed(output, "API token")
    assert authenticate(HttpRequest(), username="admin", password=password) is not None
    client = ApiClient.objects.get(name="demo-client")
    assert client.token_digest == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(list(ApiClient.objects.values()))
    assert sorted(client.scopes) == sorted(SCOPES)
    assert sorted(client.configurations.values_list("identifier", flat=True)) == [
        "demo-approvals",
        "demo-assistant",
        "demo-embeddings",
        "demo-external",
    ]
    configuration = Configuration.objects.get(identifier="demo-assistant")
    assert (configuration.model.provider.kind, configuration.model.provider.trust_zone) == ("local", "local")


def test_seed_demo_is_idempotent_and_rotates_the_credentials():
    first = run("seed_demo")
    second = run("seed_demo")
    assert printed(first, "API token") != printed(second, "API token")
    assert authenticate(HttpRequest(), username="admin", password=printed(first, "admin password")) is None
    assert (
        authenticate(HttpRequest(), username="admin", password=printed(second, "admin password")) is not None
    )
    assert (Provider.objects.count(), LlmModel.objects.count(), Configuration.objects.count()) == (3, 4, 4)
    assert ApiClient.objects.count() == 1
    assert sorted(Snippet.objects.values_list("identifier", flat=True)) == [
        "incident-runbook",
        "legal-disclaimer",
        "tone-of-voice",
    ]
    assert sorted(Skill.objects.values_list("name", "is_enabled")) == [
        ("house-style", True),
        ("release-notes", False),
    ]


def test_create_api_client_prints_the_token_once_and_stores_its_digest():
    run("seed_demo")
    output = run("create_api_client", "shop", "--scope", "runs:create", "--configuration", "demo-assistant")
    token = output.splitlines()[-1]
    client = ApiClient.objects.get(name="shop")
    assert client.token_digest == hashlib.sha256(token.encode()).hexdigest()
    assert client.scopes == ["runs:create"]


def test_create_api_client_refuses_unknown_configuration_and_stores_nothing():
    with pytest.raises(CommandError, match="Unknown configurations: nope"):
        run("create_api_client", "shop", "--scope", "runs:read", "--configuration", "nope")
    assert ApiClient.objects.count() == 0


def test_create_api_client_refuses_a_duplicate_name():
    run("create_api_client", "shop", "--scope", "runs:read")
    with pytest.raises(CommandError, match="API client with this Name already exists"):
        run("create_api_client", "shop", "--scope", "runs:read")
    assert ApiClient.objects.count() == 1
