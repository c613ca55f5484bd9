"""The snippets API: filtered, capped lists and writes through the services with field errors."""

from __future__ import annotations

import pytest

from governance.vocabulary import DataClass, Enforcement, TrustZone
from snippets.models import Snippet
from tests.factories import snippet_make
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

SNIPPETS = "/api/v1/snippets"
VALID = {
    "identifier": "tone-of-voice",
    "name": "Tone of voice",
    "text": "Write warmly.",
    "tags": ["Tone", "brand"],
    "data_class": "public_content",
    "ceiling": "external_global",
}


def test_lists_snippets_filtered_by_tag_class_enforcement_and_activity(make_caller):
    snippet_make(identifier="a", tags=("tone",))
    snippet_make(identifier="b", tags=("tone",), is_active=False)
    snippet_make(
        identifier="c",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    snippet_make(identifier="d", enforcement=Enforcement.OBSERVE)
    caller = make_caller("snippets:read")

    def identifiers(**params):
        response = caller.get(SNIPPETS, params)
        assert response.status_code == 200
        return sorted(item["identifier"] for item in response.json()["results"])

    assert identifiers() == ["a", "b", "c", "d"]
    assert identifiers(tag="TONE") == ["a", "b"]
    assert identifiers(tag="tone", is_active="true") == ["a"]
    assert identifiers(data_class="system_diagnostics") == ["c"]
    assert identifiers(enforcement="observe") == ["d"]


def test_invalid_filter_is_400_naming_the_field(make_caller):
    body = assert_error(
        make_caller("snippets:read").get(SNIPPETS, {"data_class": "top_secret"}), 400, "invalid_input"
    )
    assert list(body["extra"]["fields"]) == ["data_class"]
    assert body["extra"]["codes"] == {"data_class": ["invalid_choice"]}


def test_page_size_is_capped_at_100(make_caller):
    Snippet.objects.bulk_create(
        Snippet(
            identifier=f"s{n:03}", name=f"S{n:03}", text="t", data_class="public_content", ceiling="local"
        )
        for n in range(105)
    )
    response = make_caller("snippets:read").get(SNIPPETS, {"page_size": 500})
    assert response.json()["count"] == 105
    assert len(response.json()["results"]) == 100
    assert response.json()["next"].endswith("page=2&page_size=500")


def test_page_past_the_end_is_404(make_caller):
    assert_error(make_caller("snippets:read").get(SNIPPETS, {"page": 9}), 404, "not_found")


def test_creates_an_enforced_snippet_with_normalised_tags_and_the_client_as_author(make_caller):
    caller = make_caller("snippets:write", "snippets:read")
    response = caller.post(SNIPPETS, VALID)
    assert response.status_code == 201
    body = response.json()
    assert body["tags"] == ["brand", "tone"]
    assert body["enforcement"] == "enforce"
    snippet = Snippet.objects.get(identifier="tone-of-voice")
    created = snippet.history.earliest()
    assert (created.history_user, created.history_change_reason) == (
        None,
        f"created by api_client:{caller.client.name}",
    )


def test_patch_and_delete_versions_name_the_client(make_caller):
    snippet = snippet_make(identifier="tone")
    caller = make_caller("snippets:write")
    assert caller.patch(f"{SNIPPETS}/tone", {"name": "Tone"}).status_code == 200
    assert caller.delete(f"{SNIPPETS}/tone").status_code == 204
    reasons = list(
        Snippet.history.filter(id=snippet.pk)
        .order_by("history_date")
        .values_list("history_change_reason", flat=True)
    )
    assert reasons == [
        "created by test",
        f"updated by api_client:{caller.client.name}",
        f"deleted by api_client:{caller.client.name}",
    ]


@pytest.mark.parametrize(
    ("change", "field", "code"),
    [
        ({"data_class": "top_secret"}, "data_class", "invalid_choice"),
        ({"ceiling": None}, "ceiling", "null"),
        ({"identifier": "has space"}, "identifier", "invalid"),
        ({"text": "x" * 50_001}, "text", "max_length"),
        ({"tags": ["t"] * 51}, "tags", "max_length"),
    ],
)
def test_create_rejects_invalid_fields_and_stores_nothing(make_caller, change, field, code):
    body = assert_error(
        make_caller("snippets:write").post(SNIPPETS, {**VALID, **change}), 400, "invalid_input"
    )
    assert body["extra"]["codes"][field] in ([code], code) or code in str(body["extra"]["codes"][field])
    assert Snippet.objects.count() == 0


def test_create_with_a_ceiling_looser_than_the_class_is_400_from_the_model(make_caller):
    payload = {**VALID, "data_class": "secret_adjacent", "ceiling": "external_global"}
    body = assert_error(make_caller("snippets:write").post(SNIPPETS, payload), 400, "invalid_input")
    assert "ceiling" in body["extra"]["fields"]
    assert Snippet.objects.count() == 0


def test_create_asking_for_observe_is_400_naming_enforcement_and_stores_nothing(make_caller):
    caller = make_caller("snippets:write", "governance:classify")
    body = assert_error(caller.post(SNIPPETS, {**VALID, "enforcement": "observe"}), 400, "invalid_input")
    assert body["extra"]["fields"] == {
        "enforcement": [
            "A new snippet is always enforced. Relaxing it to observe is a recorded change of the stored "
            "snippet: PATCH its enforcement with the governance:classify scope."
        ]
    }
    assert body["extra"]["codes"] == {"enforcement": ["invalid_choice"]}
    assert Snippet.objects.count() == 0
    assert Snippet.history.count() == 0


def test_create_asking_for_enforce_is_accepted(make_caller):
    response = make_caller("snippets:write").post(SNIPPETS, {**VALID, "enforcement": "enforce"})
    assert response.status_code == 201
    assert Snippet.objects.get().enforcement == Enforcement.ENFORCE


def test_duplicate_identifier_is_400(make_caller):
    snippet_make(identifier="tone-of-voice")
    body = assert_error(make_caller("snippets:write").post(SNIPPETS, VALID), 400, "invalid_input")
    assert "identifier" in body["extra"]["fields"]
    assert Snippet.objects.count() == 1


def test_retrieves_a_snippet_and_404s_an_unknown_one(make_caller):
    snippet_make(identifier="tone", text="Warm.")
    caller = make_caller("snippets:read")
    assert caller.get(f"{SNIPPETS}/tone").json()["text"] == "Warm."
    body = assert_error(caller.get(f"{SNIPPETS}/nope"), 404, "not_found")
    assert body["extra"] == {"snippet": "nope"}


def test_patch_changes_fields_and_tags_and_promotes_to_enforce(make_caller):
    snippet_make(identifier="legacy", enforcement=Enforcement.OBSERVE, tags=("old",))
    caller = make_caller("snippets:write", "snippets:read")
    response = caller.patch(
        f"{SNIPPETS}/legacy", {"text": "New text.", "tags": ["new"], "enforcement": "enforce"}
    )
    assert response.status_code == 200
    snippet = Snippet.objects.get(identifier="legacy")
    assert (snippet.text, snippet.enforcement) == ("New text.", Enforcement.ENFORCE)
    assert [tag.name for tag in snippet.tags.all()] == ["new"]
    assert f"updated by api_client:{caller.client.name}" in {
        h.history_change_reason for h in snippet.history.all()
    }


def test_patch_with_an_invalid_classification_stores_nothing(make_caller):
    snippet_make(identifier="tone", text="Warm.")
    response = make_caller("snippets:write").patch(
        f"{SNIPPETS}/tone", {"text": "Changed.", "data_class": "secret_adjacent"}
    )
    assert_error(response, 400, "invalid_input")
    assert Snippet.objects.get(identifier="tone").text == "Warm."


def test_patch_and_delete_of_an_unknown_snippet_are_404(make_caller):
    caller = make_caller("snippets:write")
    assert_error(caller.patch(f"{SNIPPETS}/nope", {"name": "x"}), 404, "not_found")
    assert_error(caller.delete(f"{SNIPPETS}/nope"), 404, "not_found")


def test_delete_removes_the_snippet(make_caller):
    snippet_make(identifier="tone")
    caller = make_caller("snippets:write", "snippets:read")
    assert caller.delete(f"{SNIPPETS}/tone").status_code == 204
    assert not Snippet.objects.filter(identifier="tone").exists()
    assert_error(caller.get(f"{SNIPPETS}/tone"), 404, "not_found")


def test_write_scopes_are_checked_per_method(make_caller):
    snippet_make(identifier="tone")
    reader = make_caller("snippets:read")
    assert_error(reader.patch(f"{SNIPPETS}/tone", {"name": "x"}), 403, "permission_denied")
    assert_error(reader.delete(f"{SNIPPETS}/tone"), 403, "permission_denied")
    writer = make_caller("snippets:write")
    assert_error(writer.get(f"{SNIPPETS}/tone"), 403, "permission_denied")
    assert Snippet.objects.get(identifier="tone").name != "x"
