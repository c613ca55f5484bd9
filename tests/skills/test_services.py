"""Source validation, editor services, the audit's append-only guard, the task, and the Redis lock."""

from __future__ import annotations

import secrets

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from governance.actors import Actor
from governance.errors import AppendOnlyViolation
from governance.vocabulary import DataClass, TrustZone
from skills.errors import SkillSyncInProgress
from skills.models import Skill, SkillAudit, SkillSource, SkillSourceKind, SyncStatus
from skills.services import skill_disable, skill_enable, skill_source_sync
from skills.tasks import sync_skill_source_task
from tests.skills.conftest import skill_md, source_make, write_files


@pytest.fixture
def synced(tmp_path):
    source = source_make(path=str(write_files(tmp_path, {"one/SKILL.md": skill_md("one")})))
    skill_source_sync(source_id=source.pk)
    return source


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "error_field"),
    [
        (
            {"default_data_class": DataClass.SECRET_ADJACENT, "default_ceiling": TrustZone.EXTERNAL_EU},
            "default_ceiling",
        ),
        ({"default_data_class": ""}, "default_data_class"),
        ({"token_env": "ghp_" + secrets.token_hex(8)}, "token_env"),
        ({"expected_fingerprint": "ABC"}, "expected_fingerprint"),
        ({"kind": SkillSourceKind.GITHUB_REPO, "url": ""}, "url"),
        ({"kind": SkillSourceKind.GITHUB_FILE, "url": "https://github.com/a/b", "path": ""}, "path"),
        ({"path": ""}, "path"),
    ],
)
def test_an_invalid_source_is_refused_and_not_stored(fields, error_field):
    with pytest.raises(ValidationError) as caught:
        source_make(**({"path": "/srv/skills"} | fields))

    assert error_field in caught.value.message_dict
    assert SkillSource.objects.count() == 0


@pytest.mark.django_db
def test_enabling_or_disabling_twice_records_once(synced):
    skill = Skill.objects.get()

    skill_enable(skill=skill, actor=Actor.system("editor"))
    skill_enable(skill=skill, actor=Actor.system("editor"))
    skill_disable(skill=skill, actor=Actor.system("editor"))
    skill_disable(skill=skill, actor=Actor.system("editor"))

    events = list(SkillAudit.objects.filter(skill_pk=skill.pk).order_by("id").values_list("event", flat=True))
    assert events == ["ingest_created", "enabled", "disabled"]


@pytest.mark.django_db
def test_audit_rows_are_append_only(synced):
    entry = SkillAudit.objects.get()

    entry.detail = "rewritten"
    with pytest.raises(AppendOnlyViolation):
        entry.save()
    with pytest.raises(AppendOnlyViolation):
        entry.delete()
    with pytest.raises(AppendOnlyViolation):
        SkillAudit.objects.all().update(detail="rewritten")
    with pytest.raises(AppendOnlyViolation):
        SkillAudit.objects.all().delete()
    assert SkillAudit.objects.get().detail.startswith("checksum ")


@pytest.mark.django_db
def test_the_audit_outlives_a_deleted_skill(synced):
    skill = Skill.objects.get()
    identifier = skill.identifier

    skill.delete()

    assert list(SkillAudit.objects.values_list("skill_identifier", "event")) == [
        (identifier, "ingest_created")
    ]


@pytest.mark.django_db
def test_the_task_syncs_by_id_and_reports_a_typed_failure_instead_of_raising(tmp_path):
    good = source_make(path=str(write_files(tmp_path / "good", {"one/SKILL.md": skill_md("one")})))
    bad = source_make(path=str(tmp_path / "missing"))

    assert sync_skill_source_task.delay(good.pk).get() == {"source_id": good.pk, "status": "ok", "created": 1}
    assert sync_skill_source_task.delay(bad.pk).get() == {
        "source_id": bad.pk,
        "status": "error",
        "code": "skill_source_invalid",
    }
    assert SkillSource.objects.get(pk=bad.pk).sync_status == SyncStatus.ERROR


def test_the_task_acknowledges_late():
    assert sync_skill_source_task.acks_late is True
    assert sync_skill_source_task.reject_on_worker_lost is True


@pytest.mark.services
@pytest.mark.django_db
def test_with_redis_a_held_source_lock_refuses_a_second_sync(tmp_path):
    import redis

    source = source_make(path=str(write_files(tmp_path, {"one/SKILL.md": skill_md("one")})))
    held = redis.Redis.from_url(settings.REDIS_URL).lock(f"skills:source-sync:{source.pk}", timeout=30)
    assert held.acquire(blocking=False)
    try:
        with pytest.raises(SkillSyncInProgress):
            skill_source_sync(source_id=source.pk)
        assert Skill.objects.count() == 0
    finally:
        held.release()

    assert skill_source_sync(source_id=source.pk).status == SyncStatus.OK
