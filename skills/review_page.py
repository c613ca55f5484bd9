"""The review queue of skill findings: skills flagged by the injection scan, or whose front matter was read
leniently (skills/front_matter.py), and not yet acknowledged.

Editors read each finding (rule, severity, escaped excerpt) and either acknowledge the findings and
enable the skill, or disable it; both go through :mod:`skills.services`, which audit and version them.
A disabled skill stays in the queue until its findings are acknowledged: disabling is not a review.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from config.errors import ApplicationError
from governance.actors import request_actor
from skills.models import Skill
from skills.parsing import WARNING_FRONT_MATTER_LENIENT
from skills.services import skill_disable, skill_enable

REVIEW_PERMISSION = "skills.change_skill"


def review_queue() -> QuerySet[Skill]:
    """Non-orphaned skills with findings awaiting acknowledgement, by name."""
    flagged = ~Q(injection_severity="") | Q(parse_warnings__icontains=WARNING_FRONT_MATTER_LENIENT)
    return (
        Skill.objects.filter(flagged, findings_acknowledged=False, is_orphaned=False)
        .select_related("source")
        .order_by("name")
    )


_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def review_queue_view(model_admin: ModelAdmin, request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(REVIEW_PERMISSION):
        raise PermissionDenied
    # Most severe first; severities are words, so the database cannot order them by rank.
    skills = sorted(review_queue(), key=lambda s: (_SEVERITY_ORDER.get(s.injection_severity, 3), s.name))
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Skill findings awaiting review",
        "opts": model_admin.model._meta,
        "skills": skills,
    }
    return TemplateResponse(request, "admin/skills/skill/review_queue.html", context)


def review_decide_view(
    model_admin: ModelAdmin, request: HttpRequest, skill_id: int, decision: str
) -> HttpResponse:
    """``decision`` is ``acknowledge`` (acknowledge the findings and enable) or ``disable``."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not request.user.has_perm(REVIEW_PERMISSION):
        raise PermissionDenied
    skill = get_object_or_404(Skill.objects.select_related("source"), pk=skill_id)
    try:
        if decision == "acknowledge":
            skill = skill_enable(skill=skill, actor=request_actor(request), acknowledge_findings=True)
            note = "Findings acknowledged and skill enabled from the review queue."
        else:
            skill = skill_disable(skill=skill, actor=request_actor(request))
            note = "Disabled from the review queue."
    except ApplicationError as exc:
        model_admin.message_user(request, f"Not changed {skill.identifier}: {exc.message}", messages.WARNING)
    else:
        model_admin.log_change(request, skill, note)
        model_admin.message_user(request, f"{skill.name}: {note}", messages.SUCCESS)
    return HttpResponseRedirect(reverse("admin:skills_skill_review"))
