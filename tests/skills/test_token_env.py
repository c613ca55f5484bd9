"""A source's token_env may name only the variables in SKILL_SOURCE_TOKEN_ENVS, at validation and at sync."""

from __future__ import annotations

import io
import secrets

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from catalog.services import api_client_create
from skills.errors import SkillSourceTokenUnavailable
from skills.models import SkillSource, SkillSourceKind
from skills.services import skill_source_sync
from tests.skills.conftest import skill_md, source_make, write_files

pytestmark = pytest.mark.django_db

REPO_URL = "https://github.com/acme/skills"
REFUSED = "Not a variable this server allows for tokens (SKILL_SOURCE_TOKEN_ENVS): use one of GITHUB_TOKEN."
UNAVAILABLE = (
    "The source's token variable is not available: it must be listed in SKILL_SOURCE_TOKEN_ENVS "
    "and set on the server."
)


def github_source(**fields) -> SkillSource:
    return source_make(kind=SkillSourceKind.GITHUB_REPO, url=REPO_URL, ref="main", **fields)


def test_a_name_outside_the_allow_list_is_refused_with_a_typed_error_and_not_stored(monkeypatch):
    monkeypatch.setenv("SKILLS_TEST_SERVER_SECRET", "value-" + secrets.token_hex(8))

    with pytest.raises(ValidationError) as caught:
        github_source(token_env="SKILLS_TEST_SERVER_SECRET")

    assert caught.value.message_dict == {"token_env": [REFUSED]}
    assert [error.code for error in caught.value.error_dict["token_env"]] == ["token_env_not_allowed"]
    assert SkillSource.objects.count() == 0


def test_the_allow_list_comes_from_the_setting(settings):
    assert github_source(token_env="GITHUB_TOKEN").token_env == "GITHUB_TOKEN"
    settings.SKILL_SOURCE_TOKEN_ENVS = ["SKILLS_TEST_TEAM_TOKEN"]
    assert github_source(token_env="SKILLS_TEST_TEAM_TOKEN").token_env == "SKILLS_TEST_TEAM_TOKEN"
    with pytest.raises(ValidationError, match="use one of SKILLS_TEST_TEAM_TOKEN"):
        github_source(token_env="GITHUB_TOKEN")
    assert SkillSource.objects.count() == 2


def test_the_api_refuses_the_name_as_invalid_input_and_stores_nothing():
    issued = api_client_create(name="skills-writer", scopes=["skills:write"], configurations=[])
    payload = {
        "name": "team-skills",
        "kind": "github_repo",
        "url": REPO_URL,
        "token_env": "DJANGO_SECRET_KEY",
        "default_data_class": "public_content",
        "default_ceiling": "external_global",
    }

    response = Client().post(
        "/api/v1/skill-sources",
        payload,
        content_type="application/json",
        headers={"Authorization": f"Bearer {issued.token}"},
    )

    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_input",
        "message": "The request is invalid.",
        "extra": {"fields": {"token_env": [REFUSED]}, "codes": {"token_env": ["token_env_not_allowed"]}},
    }
    assert SkillSource.objects.count() == 0


def test_the_admin_form_refuses_the_name_and_stores_nothing(admin_client):
    form = {
        "name": "team-skills",
        "kind": "github_repo",
        "url": REPO_URL,
        "path": "",
        "ref": "",
        "token_env": "DJANGO_SECRET_KEY",
        "trust_level": "community",
        "default_data_class": "public_content",
        "default_ceiling": "external_global",
        "expected_fingerprint": "",
    }

    response = admin_client.post("/admin/skills/skillsource/add/", form)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"token_env": [REFUSED]}
    assert SkillSource.objects.count() == 0


def test_the_ingest_command_refuses_the_name_and_stores_nothing(tmp_path):
    folder = write_files(tmp_path, {"one/SKILL.md": skill_md("one")})

    with pytest.raises(CommandError) as caught:
        call_command("ingest_skills", str(folder), "--token-env", "DJANGO_SECRET_KEY", stdout=io.StringIO())

    assert str(caught.value) == f"token_env: {REFUSED}"
    assert SkillSource.objects.count() == 0


def test_an_unset_or_refused_name_gets_one_message_at_sync_and_nothing_is_sent(github, monkeypatch):
    secret = "value-" + secrets.token_hex(8)
    monkeypatch.setenv("SKILLS_TEST_SERVER_SECRET", secret)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    github.commit("acme", "skills", {"skills/pdf/SKILL.md": skill_md("pdf")})
    # Rows that pass no validation today: stored before the allow-list, or the setting changed since.
    fields = {"kind": SkillSourceKind.GITHUB_REPO, "url": REPO_URL, "ref": "main"}
    refused = SkillSource.objects.create(name="refused", token_env="SKILLS_TEST_SERVER_SECRET", **fields)
    unset = SkillSource.objects.create(name="unset", token_env="GITHUB_TOKEN", **fields)

    messages = []
    for source in (refused, unset):
        with pytest.raises(SkillSourceTokenUnavailable) as caught:
            skill_source_sync(source_id=source.pk, transport=github.transport())
        messages.append(caught.value.message)

    assert messages == [UNAVAILABLE, UNAVAILABLE]
    assert github.requests == []
    assert set(SkillSource.objects.values_list("last_error", flat=True)) == {
        f"skill_source_token_unavailable: {UNAVAILABLE}"
    }
    assert not any(secret in str(row) for row in SkillSource.objects.values())
