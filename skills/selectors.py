"""Reads for skills and sources."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet

from skills.models import Skill, SkillSource


def skill_source_get(*, source_id: int) -> SkillSource | None:
    return SkillSource.objects.filter(pk=source_id).first()


def skill_list(*, source_id: int | None = None, enabled: bool | None = None) -> QuerySet[Skill]:
    skills = Skill.objects.select_related("source")
    if source_id is not None:
        skills = skills.filter(source_id=source_id)
    if enabled is not None:
        skills = skills.filter(is_enabled=enabled)
    return skills


def skills_in_order(*, skill_ids: Sequence[int]) -> list[Skill]:
    """The skills with these ids, in the given order (unknown ids are left out); one query."""
    by_id = Skill.objects.select_related("source").in_bulk(list(skill_ids))
    return [by_id[pk] for pk in skill_ids if pk in by_id]


def skill_get(*, skill_id: int) -> Skill | None:
    return Skill.objects.select_related("source").filter(pk=skill_id).first()
