"""The snippets API: list (filtered, paginated), create, retrieve, update, delete.

Reads need ``snippets:read``, writes ``snippets:write``. Reads return the live version, with
``has_draft`` when an editor's change waits to be published; writes change the live row at once
(API clients are programs, not editors; docs/decisions/0014-drafts-and-publishing.md). Every write
goes through :mod:`snippets.services` (validation, injection scan, history); a validation error is a 400
``invalid_input`` naming the fields. A write whose name, description or text holds personal data under a
class below ``personal_data`` is a 400 ``personal_data_found`` naming each finding's kind, field and line
(never the value), unless it sets ``personal_data_override``, which is recorded as a governance event.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import ListApi, list_api, operation_schema, validated
from governance.actors import request_actor
from governance.receivers import WithheldAboveZone
from governance.vocabulary import DataClass, Enforcement, TrustZone
from snippets.errors import SnippetNotFound
from snippets.models import MAX_SNIPPET_CHARS, Snippet
from snippets.selectors import snippet_get, snippet_query
from snippets.services import snippet_create, snippet_delete, snippet_update

TAG = "snippets"
MAX_TAGS = 50
# The one enforcement a new snippet may ask for (named in the schema: SPECTACULAR_SETTINGS).
NEW_SNIPPET_ENFORCEMENT = [(Enforcement.ENFORCE.value, Enforcement.ENFORCE.label)]
NEW_ROWS_ENFORCE = (
    "A new snippet is always enforced. Relaxing it to observe is a recorded change of the stored "
    "snippet: PATCH its enforcement with the governance:classify scope."
)


class SnippetSerializer(WithheldAboveZone):
    """A snippet; above the client's trust zone its description, text and metadata are left out."""

    withheld_fields = ("description", "text", "metadata")

    identifier = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True, required=False)
    text = serializers.CharField(allow_blank=True, required=False)
    tags = serializers.SerializerMethodField()
    data_class = serializers.CharField(allow_blank=True)
    ceiling = serializers.CharField(allow_blank=True)
    enforcement = serializers.ChoiceField(choices=Enforcement.choices)
    is_active = serializers.BooleanField()
    sorting = serializers.IntegerField()
    metadata = serializers.DictField(required=False)
    injection_severity = serializers.CharField(allow_blank=True, help_text="Of the scan run on every save.")
    updated_at = serializers.DateTimeField()
    has_draft = serializers.BooleanField(
        read_only=True, help_text="An editor's change is waiting to be published; every field here is live."
    )

    def get_tags(self, snippet: Snippet) -> list[str]:
        return sorted(tag.name for tag in snippet.tags.all())


def _snippet(identifier: str) -> Snippet:
    snippet = snippet_get(identifier=identifier)
    if snippet is None:
        raise SnippetNotFound(f"There is no snippet {identifier!r}.", extra={"snippet": identifier})
    return snippet


def _override_field() -> serializers.BooleanField:
    return serializers.BooleanField(
        required=False,
        default=False,
        help_text=(
            "Keep a data class below personal_data although the snippet's text holds personal data "
            "(recorded as a personal_data_override governance event). Without it such a write is a 400 "
            "personal_data_found naming each finding's kind, field and line, and nothing is stored."
        ),
    )


def _tags_field() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=MAX_TAGS, required=False
    )


@list_api(tag=TAG, summary="List snippets", operation_id="snippets_list", page="SnippetPage")
class SnippetCollectionApi(ListApi):
    """``GET snippets`` (snippets:read) and ``POST snippets`` (snippets:write) share one path."""

    required_scope = {"GET": "snippets:read", "POST": "snippets:write"}
    item = SnippetSerializer

    class FilterSerializer(serializers.Serializer):
        tag = serializers.CharField(max_length=64, required=False)
        data_class = serializers.ChoiceField(choices=DataClass.choices, required=False)
        enforcement = serializers.ChoiceField(choices=Enforcement.choices, required=False)
        is_active = serializers.BooleanField(required=False, allow_null=True, default=None)

        class Meta:
            ref_name = "SnippetFilter"

    class CreateInputSerializer(serializers.Serializer):
        identifier = serializers.SlugField(max_length=100)
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(max_length=500, required=False, allow_blank=True)
        text = serializers.CharField(max_length=MAX_SNIPPET_CHARS, trim_whitespace=False)
        tags = _tags_field()
        data_class = serializers.ChoiceField(choices=DataClass.choices)
        ceiling = serializers.ChoiceField(choices=TrustZone.choices)
        # Accepted only as "enforce": left out of the field list, "observe" was dropped without a word
        # and the snippet stored enforced. Observing is a recorded change of an existing snippet.
        enforcement = serializers.ChoiceField(
            choices=NEW_SNIPPET_ENFORCEMENT,
            required=False,
            error_messages={"invalid_choice": NEW_ROWS_ENFORCE},
            help_text="New snippets are enforced; only enforce is accepted here.",
        )
        is_active = serializers.BooleanField(required=False)
        sorting = serializers.IntegerField(min_value=-(2**31), max_value=2**31 - 1, required=False)
        metadata = serializers.DictField(required=False)
        personal_data_override = _override_field()

        class Meta:
            ref_name = "SnippetCreateInput"

    def rows(self, request: Request, filters: dict[str, Any]) -> QuerySet[Snippet]:
        return snippet_query(**filters)

    @operation_schema(
        TAG,
        "Create a snippet (enforced)",
        SnippetSerializer,
        status=201,
        request=CreateInputSerializer,
        errors=(400, 413),
    )
    def post(self, request: Request) -> Response:
        data = validated(self.CreateInputSerializer, request.data)
        snippet = snippet_create(
            actor=request_actor(request),
            identifier=data["identifier"],
            name=data["name"],
            text=data["text"],
            data_class=data["data_class"],
            ceiling=data["ceiling"],
            description=data.get("description", ""),
            tag_names=data.get("tags", ()),
            is_active=data.get("is_active", True),
            sorting=data.get("sorting", 0),
            metadata=data.get("metadata"),
            personal_data_override=data["personal_data_override"],
        )
        return Response(
            SnippetSerializer(_snippet(snippet.identifier), context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


class SnippetDetailApi(APIView):
    """``GET``/``PATCH``/``DELETE snippets/{identifier}``."""

    required_scope = {"GET": "snippets:read", "PATCH": "snippets:write", "DELETE": "snippets:write"}

    class UpdateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        description = serializers.CharField(max_length=500, required=False, allow_blank=True)
        text = serializers.CharField(max_length=MAX_SNIPPET_CHARS, trim_whitespace=False, required=False)
        tags = _tags_field()
        data_class = serializers.ChoiceField(choices=DataClass.choices, required=False)
        ceiling = serializers.ChoiceField(choices=TrustZone.choices, required=False)
        enforcement = serializers.ChoiceField(
            choices=Enforcement.choices,
            required=False,
            help_text="Promote an observed snippet to enforce; relaxing to observe needs governance:classify.",
        )
        is_active = serializers.BooleanField(required=False)
        sorting = serializers.IntegerField(min_value=-(2**31), max_value=2**31 - 1, required=False)
        metadata = serializers.DictField(required=False)
        personal_data_override = _override_field()

        class Meta:
            ref_name = "SnippetUpdateInput"

    @operation_schema(TAG, "A snippet", SnippetSerializer, errors=(404,))
    def get(self, request: Request, identifier: str) -> Response:
        return Response(SnippetSerializer(_snippet(identifier), context={"request": request}).data)

    @operation_schema(
        TAG,
        "Change a snippet",
        SnippetSerializer,
        description=(
            "Lowering the data class, loosening the ceiling or relaxing enforcement to observe needs the "
            "governance:classify scope (else 403 reclassify_forbidden, extra.fields naming them, nothing "
            "stored). Every change of the classification is recorded as a reclassified governance event."
        ),
        request=UpdateInputSerializer,
        errors=(400, 404, 413),
        s403="permission_denied (extra.required_scope), or reclassify_forbidden (extra.fields)",
    )
    def patch(self, request: Request, identifier: str) -> Response:
        snippet = _snippet(identifier)
        data = validated(self.UpdateInputSerializer, request.data)
        snippet_update(
            snippet=snippet,
            actor=request_actor(request),
            name=data.get("name"),
            description=data.get("description"),
            text=data.get("text"),
            data_class=data.get("data_class"),
            ceiling=data.get("ceiling"),
            enforcement=data.get("enforcement"),
            is_active=data.get("is_active"),
            sorting=data.get("sorting"),
            metadata=data.get("metadata"),
            tag_names=data.get("tags"),
            personal_data_override=data["personal_data_override"],
        )
        return Response(SnippetSerializer(_snippet(identifier), context={"request": request}).data)

    @operation_schema(TAG, "Delete a snippet", None, status=204, errors=(404,))
    def delete(self, request: Request, identifier: str) -> Response:
        snippet_delete(snippet=_snippet(identifier), actor=request_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
