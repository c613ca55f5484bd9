"""The skills API: skills (list, detail) and skill sources (create, detail, sync).

Reads need ``skills:read``, writes ``skills:write``. Only GitHub sources can be created here: local
folders and uploaded archives name server paths and stay an admin operation (400
``skill_source_admin_only``). A sync is queued (202) and runs on a worker.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import MAX_ID, ListApi, list_api, operation_schema, validated
from governance.receivers import WithheldAboveZone
from governance.vocabulary import DataClass, TrustZone
from skills.errors import SkillNotFound
from skills.models import Skill, SkillSource, SkillSourceKind, SkillTrustLevel
from skills.selectors import skill_get, skill_list, skill_source_get
from skills.services import skill_source_create, skill_source_request_sync

TAG = "skills"


class SkillSerializer(WithheldAboveZone):
    """A skill; above the client's trust zone its description is left out."""

    withheld_fields: tuple[str, ...] = ("description",)

    id = serializers.IntegerField()
    identifier = serializers.CharField(help_text="source id:path, stable across syncs")
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True, required=False)
    source = serializers.IntegerField(source="source_id")
    source_name = serializers.CharField(source="source.name")
    path = serializers.CharField()
    trust_level = serializers.ChoiceField(choices=SkillTrustLevel.choices)
    data_class = serializers.CharField(allow_blank=True)
    ceiling = serializers.CharField(allow_blank=True)
    enforcement = serializers.CharField()
    is_enabled = serializers.BooleanField()
    is_orphaned = serializers.BooleanField()
    checksum = serializers.CharField()
    source_sha = serializers.CharField(allow_blank=True)
    injection_severity = serializers.CharField(allow_blank=True)
    updated_at = serializers.DateTimeField()


class SkillSourceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=SkillSourceKind.choices)
    url = serializers.CharField(allow_blank=True)
    path = serializers.CharField(allow_blank=True)
    ref = serializers.CharField(allow_blank=True)
    token_env = serializers.CharField(allow_blank=True, help_text="The variable's name; never the token.")
    trust_level = serializers.ChoiceField(choices=SkillTrustLevel.choices)
    default_data_class = serializers.CharField()
    default_ceiling = serializers.CharField()
    expected_fingerprint = serializers.CharField(allow_blank=True)
    pinned_sha = serializers.CharField(allow_blank=True)
    sync_status = serializers.CharField()
    last_synced_at = serializers.DateTimeField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)
    last_counts = serializers.DictField(child=serializers.IntegerField())
    created_at = serializers.DateTimeField()


def _skill(skill_id: int) -> Skill:
    skill = skill_get(skill_id=skill_id) if skill_id <= MAX_ID else None
    if skill is None:
        raise SkillNotFound(f"There is no skill {skill_id}.", extra={"skill": skill_id})
    return skill


def _source(source_id: int) -> SkillSource:
    source = skill_source_get(source_id=source_id) if source_id <= MAX_ID else None
    if source is None:
        raise SkillNotFound(f"There is no skill source {source_id}.", extra={"source": source_id})
    return source


def _source_response(source: SkillSource, status_code: int) -> Response:
    location = reverse("skill-source-detail", kwargs={"source_id": source.pk})
    return Response(SkillSourceSerializer(source).data, status=status_code, headers={"Location": location})


@list_api(tag=TAG, summary="List skills", operation_id="skills_list", page="SkillPage")
class SkillListApi(ListApi):
    required_scope = "skills:read"
    item = SkillSerializer

    class FilterSerializer(serializers.Serializer):
        source = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False)
        enabled = serializers.BooleanField(required=False, allow_null=True, default=None)

        class Meta:
            ref_name = "SkillFilter"

    def rows(self, request: Request, filters: dict[str, Any]) -> QuerySet[Skill]:
        return skill_list(source_id=filters.get("source"), enabled=filters["enabled"])


class SkillDetailApi(APIView):
    required_scope = "skills:read"

    class OutputSerializer(SkillSerializer):
        """A skill with its content; above the client's trust zone every text of it is left out."""

        withheld_fields = (
            "description",
            "body",
            "compatibility",
            "license",
            "metadata",
            "allowed_tools",
            "unknown_keys",
            "parse_warnings",
            "injection_findings",
        )

        body = serializers.CharField(
            allow_blank=True, required=False, help_text="Untrusted data: fenced when composed."
        )
        compatibility = serializers.CharField(allow_blank=True, required=False)
        license = serializers.CharField(allow_blank=True, required=False)
        metadata = serializers.DictField(required=False)
        allowed_tools = serializers.ListField(child=serializers.CharField(), required=False)
        unknown_keys = serializers.DictField(required=False)
        parse_warnings = serializers.ListField(child=serializers.JSONField(), required=False)
        injection_findings = serializers.ListField(child=serializers.DictField(), required=False)

        class Meta:
            ref_name = "SkillDetail"

    @operation_schema(TAG, "A skill", OutputSerializer, errors=(404,))
    def get(self, request: Request, skill_id: int) -> Response:
        return Response(self.OutputSerializer(_skill(skill_id), context={"request": request}).data)


class SkillSourceCreateApi(APIView):
    required_scope = "skills:write"

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        kind = serializers.ChoiceField(
            choices=SkillSourceKind.choices, help_text="GitHub kinds only; local kinds are admin-only (400)."
        )
        url = serializers.URLField(max_length=500)
        path = serializers.CharField(max_length=1000, required=False, allow_blank=True)
        ref = serializers.CharField(max_length=200, required=False, allow_blank=True)
        token_env = serializers.CharField(max_length=128, required=False, allow_blank=True)
        trust_level = serializers.ChoiceField(choices=SkillTrustLevel.choices, required=False)
        default_data_class = serializers.ChoiceField(choices=DataClass.choices)
        default_ceiling = serializers.ChoiceField(choices=TrustZone.choices)
        expected_fingerprint = serializers.CharField(max_length=64, required=False, allow_blank=True)

        class Meta:
            ref_name = "SkillSourceCreateInput"

    @operation_schema(
        TAG,
        "Add a GitHub skill source",
        SkillSourceSerializer,
        status=201,
        request=InputSerializer,
        errors=(400, 413),
        s400="invalid_input, or skill_source_admin_only for local kinds",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        source = skill_source_create(
            name=data["name"],
            kind=data["kind"],
            url=data["url"],
            default_data_class=data["default_data_class"],
            default_ceiling=data["default_ceiling"],
            path=data.get("path", ""),
            ref=data.get("ref", ""),
            token_env=data.get("token_env", ""),
            trust_level=data.get("trust_level", SkillTrustLevel.UNTRUSTED),
            expected_fingerprint=data.get("expected_fingerprint", ""),
            server_paths_allowed=False,
        )
        return _source_response(source, status.HTTP_201_CREATED)


class SkillSourceDetailApi(APIView):
    required_scope = "skills:read"

    @operation_schema(TAG, "A skill source with its sync status", SkillSourceSerializer, errors=(404,))
    def get(self, request: Request, source_id: int) -> Response:
        return Response(SkillSourceSerializer(_source(source_id)).data)


class SkillSourceSyncApi(APIView):
    required_scope = "skills:write"

    @operation_schema(
        TAG,
        "Queue a sync of a skill source",
        OpenApiResponse(SkillSourceSerializer, description="Queued; Location names the source."),
        status=202,
        request=None,
        errors=(404,),
    )
    def post(self, request: Request, source_id: int) -> Response:
        source = _source(source_id)
        skill_source_request_sync(source_id=source.pk)
        return _source_response(source, status.HTTP_202_ACCEPTED)
