"""The skills API: skills, GitHub sources (local paths are admin-only) and queued syncs."""

from __future__ import annotations

import pytest

from skills.models import SkillSource
from tests.factories import skill_make
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

SOURCE = {
    "name": "team-skills",
    "kind": "github_repo",
    "url": "https://github.com/example/skills",
    "default_data_class": "public_content",
    "default_ceiling": "external_global",
}


def test_lists_skills_filtered_by_source_and_enabled(make_caller, tmp_path):
    enabled = skill_make(tmp_path, name="house-style")
    disabled = skill_make(tmp_path, name="release-notes", enabled=False)
    caller = make_caller("skills:read")

    def names(**params):
        response = caller.get("/api/v1/skills", params)
        assert response.status_code == 200
        return sorted(item["name"] for item in response.json()["results"])

    assert names() == ["house-style", "release-notes"]
    assert names(enabled="true") == ["house-style"]
    assert names(enabled="false") == ["release-notes"]
    assert names(source=disabled.source_id) == ["release-notes"]
    assert names(source=enabled.source_id, enabled="false") == []


def test_invalid_skill_filter_is_400(make_caller):
    body = assert_error(
        make_caller("skills:read").get("/api/v1/skills", {"source": "abc"}), 400, "invalid_input"
    )
    assert list(body["extra"]["fields"]) == ["source"]


def test_skill_detail_has_the_body_and_unknown_is_404(make_caller, tmp_path):
    skill = skill_make(tmp_path, body="# Steps\n\nBe brief.\n")
    caller = make_caller("skills:read")
    body = caller.get(f"/api/v1/skills/{skill.pk}").json()
    assert (body["identifier"], body["body"]) == (skill.identifier, "# Steps\n\nBe brief.\n")
    assert_error(caller.get(f"/api/v1/skills/{skill.pk + 1000}"), 404, "not_found")
    assert_error(caller.get(f"/api/v1/skills/{2**70}"), 404, "not_found")


def test_skills_need_the_read_scope(make_caller):
    assert_error(make_caller("skills:write").get("/api/v1/skills"), 403, "permission_denied")


def test_creates_a_github_source_with_its_location(make_caller):
    response = make_caller("skills:write").post("/api/v1/skill-sources", SOURCE)
    assert response.status_code == 201
    source = SkillSource.objects.get(name="team-skills")
    assert response["Location"] == f"/api/v1/skill-sources/{source.pk}"
    assert response.json()["sync_status"] == "never_synced"


@pytest.mark.parametrize("kind", ["local_folder", "uploaded_archive"])
def test_local_sources_are_admin_only_and_nothing_is_stored(make_caller, kind):
    payload = {**SOURCE, "kind": kind, "path": "/etc"}
    body = assert_error(
        make_caller("skills:write").post("/api/v1/skill-sources", payload), 400, "skill_source_admin_only"
    )
    assert body["extra"] == {"kind": kind}
    assert SkillSource.objects.count() == 0


def test_invalid_source_is_400_naming_the_field(make_caller):
    payload = {**SOURCE, "token_env": "ghp not a name"}
    body = assert_error(
        make_caller("skills:write").post("/api/v1/skill-sources", payload), 400, "invalid_input"
    )
    assert list(body["extra"]["fields"]) == ["token_env"]
    assert SkillSource.objects.count() == 0


def test_a_host_off_the_allow_list_is_refused_at_creation_naming_it(
    make_caller, django_capture_on_commit_callbacks
):
    payload = {**SOURCE, "url": "https://gitlab.example.com/example/skills"}
    with django_capture_on_commit_callbacks() as callbacks:
        body = assert_error(
            make_caller("skills:write").post("/api/v1/skill-sources", payload), 400, "github_url_refused"
        )
    assert body["message"] == "Host 'gitlab.example.com' is not on the GitHub allow-list."
    assert body["extra"] == {"field": "url", "host": "gitlab.example.com"}
    assert SkillSource.objects.count() == 0
    assert callbacks == []


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("http://github.com/example/skills", "github_url_refused"),
        ("https://github.com:8443/example/skills", "github_url_refused"),
        ("https://github.com/example/skills/tree/main/tools", "skill_source_invalid"),
    ],
    ids=["plain-http", "other-port", "not-a-repository-url"],
)
def test_a_url_a_sync_would_refuse_is_refused_at_creation(make_caller, url, code):
    body = assert_error(
        make_caller("skills:write").post("/api/v1/skill-sources", {**SOURCE, "url": url}), 400, code
    )
    assert body["extra"]["field"] == "url"
    assert SkillSource.objects.count() == 0


def test_source_writes_need_the_write_scope(make_caller):
    assert_error(make_caller("skills:read").post("/api/v1/skill-sources", SOURCE), 403, "permission_denied")
    assert SkillSource.objects.count() == 0


def test_source_detail_and_unknown_source_404(make_caller):
    source = SkillSource.objects.create(**SOURCE)
    caller = make_caller("skills:read")
    assert caller.get(f"/api/v1/skill-sources/{source.pk}").json()["name"] == "team-skills"
    assert_error(caller.get(f"/api/v1/skill-sources/{source.pk + 1}"), 404, "not_found")


def test_sync_is_queued_on_commit_and_answers_202(make_caller, django_capture_on_commit_callbacks):
    source = SkillSource.objects.create(**SOURCE)
    caller = make_caller("skills:write")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = caller.post(f"/api/v1/skill-sources/{source.pk}/sync")
    assert response.status_code == 202
    assert response["Location"] == f"/api/v1/skill-sources/{source.pk}"
    assert len(callbacks) == 1


def test_sync_of_an_unknown_source_is_404_and_queues_nothing(make_caller, django_capture_on_commit_callbacks):
    caller = make_caller("skills:write")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert_error(caller.post("/api/v1/skill-sources/999/sync"), 404, "not_found")
    assert callbacks == []


def test_sync_needs_the_write_scope(make_caller, django_capture_on_commit_callbacks):
    source = SkillSource.objects.create(**SOURCE)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert_error(
            make_caller("skills:read").post(f"/api/v1/skill-sources/{source.pk}/sync"),
            403,
            "permission_denied",
        )
    assert callbacks == []
