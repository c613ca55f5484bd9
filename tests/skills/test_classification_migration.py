"""Skills that predate classification observe; skills created afterwards enforce and need a class."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from tests.migration_helpers import migrate_to, migrate_to_latest

SKILL = {"name": "legacy", "description": "Old.", "content": "---\n", "checksum": "0" * 64}


@pytest.mark.django_db(transaction=True)
def test_existing_skills_become_observe_and_new_ones_enforce():
    old_apps = migrate_to([("skills", "0001_initial")])
    OldSource = old_apps.get_model("skills", "SkillSource")
    source = OldSource.objects.create(
        name="legacy-source", kind="local_folder", path="/srv/skills", default_data_class="source_code",
        default_ceiling="external_eu",
    )  # fmt: skip
    old_apps.get_model("skills", "Skill").objects.create(source_id=source.pk, path="legacy/SKILL.md", **SKILL)

    new_apps = migrate_to([("skills", "0002_skill_classification")])
    Skill = new_apps.get_model("skills", "Skill")
    legacy = Skill.objects.get(path="legacy/SKILL.md")
    assert (legacy.enforcement, legacy.data_class, legacy.ceiling) == ("observe", "", "")
    history = new_apps.get_model("skills", "HistoricalSkill")
    assert {f.name for f in history._meta.fields} >= {"data_class", "ceiling", "enforcement"}

    fresh = Skill(source_id=source.pk, path="fresh/SKILL.md", **(SKILL | {"name": "fresh"}))
    assert fresh.enforcement == "enforce"
    with pytest.raises(IntegrityError), transaction.atomic():
        fresh.save()
    assert not Skill.objects.filter(path="fresh/SKILL.md").exists()
    fresh.data_class, fresh.ceiling = "editor_content", "external_global"
    fresh.save()
    assert Skill.objects.get(path="fresh/SKILL.md").enforcement == "enforce"
    migrate_to_latest()
