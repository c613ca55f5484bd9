"""Uploaded zip archives: unsafe archives are rejected whole and nothing is stored."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from skills.errors import SkillArchiveRejected
from skills.models import Skill, SkillAudit, SkillSourceKind, SyncStatus
from skills.services import skill_source_sync
from tests.skills.conftest import skill_md, source_make

MIB = 1024 * 1024


def make_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            archive.writestr(name, content)
    return path


def symlink_entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


GOOD = ("pack/ok/SKILL.md", skill_md("ok"))

UNSAFE = {
    "path_traversal": [GOOD, ("../outside/SKILL.md", skill_md("outside"))],
    "absolute": [GOOD, ("/etc/skills/SKILL.md", skill_md("skills"))],
    "backslash": [GOOD, ("pack\\..\\..\\SKILL.md", skill_md("x"))],
    "symlink": [GOOD, (symlink_entry("pack/link/SKILL.md"), b"/etc/passwd")],
    "member_too_large": [GOOD, ("pack/bomb.bin", b"\0" * (6 * MIB))],
    "too_large": [GOOD, *[(f"pack/part{n}.bin", b"\0" * (4 * MIB + 1)) for n in range(5)]],
    "too_many_entries": [GOOD, *[(f"pack/many/{n}.txt", b"x") for n in range(2000)]],
}
EXPECTED_RULE = {"absolute": "path_traversal", "backslash": "path_traversal"}


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_an_unsafe_archive_is_rejected_whole_and_nothing_is_stored(tmp_path, case):
    archive = make_zip(tmp_path / "skills.zip", UNSAFE[case])
    source = source_make(kind=SkillSourceKind.UPLOADED_ARCHIVE, path=str(archive))

    with pytest.raises(SkillArchiveRejected) as caught:
        skill_source_sync(source_id=source.pk)

    assert caught.value.rule == EXPECTED_RULE.get(case, case)
    assert Skill.objects.count() == 0
    assert SkillAudit.objects.count() == 0
    source.refresh_from_db()
    assert source.sync_status == SyncStatus.ERROR
    assert source.last_error.startswith("skill_archive_rejected:")


@pytest.mark.django_db
def test_a_file_that_is_not_a_zip_is_rejected(tmp_path):
    fake = tmp_path / "skills.zip"
    fake.write_bytes(b"PK\x03\x04 not really a zip")
    source = source_make(kind=SkillSourceKind.UPLOADED_ARCHIVE, path=str(fake))

    with pytest.raises(SkillArchiveRejected) as caught:
        skill_source_sync(source_id=source.pk)

    assert caught.value.rule == "invalid"
    assert Skill.objects.count() == 0


@pytest.mark.django_db
def test_a_safe_archive_is_ingested_from_memory(tmp_path):
    archive = make_zip(
        tmp_path / "skills.zip",
        [
            GOOD,
            ("pack/ok/scripts/run.py", b"print('hi')\n"),
            ("pack/.claude/skills/review/SKILL.md", skill_md("review")),
            ("pack/node_modules/dep/SKILL.md", skill_md("dep")),
            ("SKILL.md", skill_md("top")),
        ],
    )
    source = source_make(kind=SkillSourceKind.UPLOADED_ARCHIVE, path=str(archive))

    result = skill_source_sync(source_id=source.pk)

    assert result.created == ("SKILL.md", "pack/.claude/skills/review/SKILL.md", "pack/ok/SKILL.md")
    assert result.failed == ()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills.zip"]  # nothing extracted to disk
