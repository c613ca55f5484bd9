"""The skills API routes, included under ``/api/v1/``."""

from __future__ import annotations

from django.urls import path

from skills.apis import (
    SkillDetailApi,
    SkillListApi,
    SkillSourceCreateApi,
    SkillSourceDetailApi,
    SkillSourceSyncApi,
)

urlpatterns = [
    path("skills", SkillListApi.as_view(), name="skill-list"),
    path("skills/<int:skill_id>", SkillDetailApi.as_view(), name="skill-detail"),
    path("skill-sources", SkillSourceCreateApi.as_view(), name="skill-source-create"),
    path("skill-sources/<int:source_id>", SkillSourceDetailApi.as_view(), name="skill-source-detail"),
    path("skill-sources/<int:source_id>/sync", SkillSourceSyncApi.as_view(), name="skill-source-sync"),
]
