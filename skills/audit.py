"""Writing the append-only skill audit, and naming who acted. Never content."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from skills.models import Skill, SkillAudit, SkillAuditEvent, SkillSource

MAX_DETAIL_CHARS = 300


def actor_label(actor: Any) -> str:
    """``user:<username>`` for a user, the string itself for a named process, ``system`` for nothing."""
    if isinstance(actor, AbstractBaseUser):
        return f"user:{actor.get_username()}"[:150]
    return (str(actor) if actor else "system")[:150]


def history_user(actor: Any) -> AbstractBaseUser | None:
    """The user to attach to a history version, when the actor is one."""
    return actor if isinstance(actor, AbstractBaseUser) else None


def audit_record(
    *,
    event: SkillAuditEvent,
    actor: Any,
    skill: Skill | None = None,
    source: SkillSource | None = None,
    detail: str = "",
) -> SkillAudit:
    source = source or (skill.source if skill is not None else None)
    return SkillAudit.objects.create(
        event=event,
        actor=actor_label(actor),
        skill_pk=skill.pk if skill is not None else None,
        skill_identifier=skill.identifier if skill is not None else "",
        source_pk=source.pk if source is not None else None,
        source_name=source.name if source is not None else "",
        detail=detail[:MAX_DETAIL_CHARS],
    )
