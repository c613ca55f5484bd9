"""Writing the append-only skill audit, and naming who acted. Never content."""

from __future__ import annotations

from governance.actors import Actor
from skills.models import Skill, SkillAudit, SkillAuditEvent, SkillSource

MAX_DETAIL_CHARS = 300


def audit_record(
    *,
    event: SkillAuditEvent,
    actor: Actor,
    skill: Skill | None = None,
    source: SkillSource | None = None,
    detail: str = "",
) -> SkillAudit:
    source = source or (skill.source if skill is not None else None)
    return SkillAudit.objects.create(
        event=event,
        actor=actor.label,
        skill_pk=skill.pk if skill is not None else None,
        skill_identifier=skill.identifier if skill is not None else "",
        source_pk=source.pk if source is not None else None,
        source_name=source.name if source is not None else "",
        detail=detail[:MAX_DETAIL_CHARS],
    )
