"""Authentication, scopes, rate limits, body size and the one error format on every API failure."""

from __future__ import annotations

import json

import pytest

from catalog.models import ApiClient
from snippets.models import Snippet
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

SNIPPETS = "/api/v1/snippets"
SNIPPET = {
    "identifier": "tone",
    "name": "Tone",
    "text": "Write warmly.",
    "data_class": "public_content",
    "ceiling": "external_global",
}


def test_request_without_a_token_is_401_not_authenticated(client):
    response = client.get(SNIPPETS)
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_unknown_token_is_401_authentication_failed(client, make_caller):
    make_caller("snippets:read")
    response = client.get(SNIPPETS, headers={"Authorization": "Bearer " + "x" * 40})
    assert_error(response, 401, "authentication_failed")


def test_malformed_authorization_header_is_401(client, make_caller):
    caller = make_caller("snippets:read")
    response = client.get(SNIPPETS, headers={"Authorization": f"Token {caller.token}"})
    assert_error(response, 401, "authentication_failed")


def test_inactive_client_is_401(make_caller):
    caller = make_caller("snippets:read")
    ApiClient.objects.filter(pk=caller.client.pk).update(is_active=False)
    assert_error(caller.get(SNIPPETS), 401, "authentication_failed")


def test_missing_scope_is_403_naming_the_scope(make_caller):
    caller = make_caller("runs:read")
    body = assert_error(caller.get(SNIPPETS), 403, "permission_denied")
    assert body["extra"] == {"required_scope": "snippets:read"}


def test_read_scope_does_not_allow_writes_and_nothing_is_stored(make_caller):
    caller = make_caller("snippets:read")
    assert caller.get(SNIPPETS).status_code == 200
    body = assert_error(caller.post(SNIPPETS, {"identifier": "x"}), 403, "permission_denied")
    assert body["extra"] == {"required_scope": "snippets:write"}
    assert Snippet.objects.count() == 0


def test_rate_limit_is_per_client_and_answers_429_with_retry_after(make_caller, settings):
    settings.API_RATE_LIMIT = "2/min"
    first, second = make_caller("snippets:read"), make_caller("snippets:read")
    assert [first.get(SNIPPETS).status_code for _ in range(2)] == [200, 200]
    response = first.get(SNIPPETS)
    body = assert_error(response, 429, "throttled")
    assert 1 <= body["extra"]["retry_after"] <= 60
    assert response["Retry-After"] == str(body["extra"]["retry_after"])
    assert second.get(SNIPPETS).status_code == 200


def test_oversize_body_is_413_request_too_large_and_stores_nothing(make_caller, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    caller = make_caller("snippets:write")
    payload = {
        "identifier": "big",
        "name": "Big",
        "text": "x" * 4000,
        "data_class": "public_content",
        "ceiling": "external_global",
    }
    assert len(json.dumps(payload)) > 2048
    body = assert_error(caller.post(SNIPPETS, payload), 413, "request_too_large")
    assert body["extra"] == {"limit_bytes": 2048}
    assert Snippet.objects.count() == 0


@pytest.mark.parametrize("debug", [True, False])
def test_unmatched_api_paths_are_json_404s_and_admin_pages_stay_html(make_caller, settings, debug):
    settings.DEBUG = debug
    caller = make_caller()
    body = assert_error(caller.get("/api/v1/nope"), 404, "not_found")
    assert body == {"code": "not_found", "message": "Not found.", "extra": {}}
    assert_error(
        caller.http.post("/api/nope/deeper?x=1", "{}", content_type="application/json"), 404, "not_found"
    )
    page = caller.http.get("/nope")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")


def test_malformed_json_is_400_parse_error(make_caller):
    caller = make_caller("snippets:write")
    response = caller.http.post(
        SNIPPETS,
        "{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {caller.token}"},
    )
    assert_error(response, 400, "parse_error")
    assert Snippet.objects.count() == 0


def nested(depth: int) -> str:
    return '{"identifier": "deep", "tags": ' + "[" * depth + "]" * depth + "}"


def post_raw(caller, path: str, body: str, content_type: str = "application/json"):
    headers = {"Authorization": f"Bearer {caller.token}"}
    return caller.http.post(path, body, content_type=content_type, headers=headers)


def test_json_nested_a_thousand_levels_is_400_invalid_input_naming_the_limit(make_caller):
    caller = make_caller("snippets:write")
    body = assert_error(post_raw(caller, SNIPPETS, nested(1000)), 400, "invalid_input")
    message = "The JSON body nests arrays and objects deeper than 64 levels."
    assert body == {
        "code": "invalid_input",
        "message": message,
        "extra": {
            "fields": {"non_field_errors": [message]},
            "codes": {"non_field_errors": ["max_depth"]},
            "max_depth": 64,
        },
    }
    assert Snippet.objects.count() == 0


def test_json_depth_bound_is_64_levels_and_brackets_in_strings_do_not_count(make_caller):
    caller = make_caller("snippets:write")
    at_bound = assert_error(post_raw(caller, SNIPPETS, nested(63)), 400, "invalid_input")
    assert "max_depth" not in at_bound["extra"]  # parsed: the serializer refused the fields instead
    past_bound = assert_error(post_raw(caller, SNIPPETS, nested(64)), 400, "invalid_input")
    assert past_bound["extra"]["max_depth"] == 64
    payload = {**SNIPPET, "text": "[" * 5000 + '\\"{' * 100}
    assert post_raw(caller, SNIPPETS, json.dumps(payload)).status_code == 201
    assert Snippet.objects.get().text == payload["text"]


def test_wrong_method_is_a_json_405_and_wrong_media_type_a_json_415(make_caller):
    caller = make_caller()
    response = caller.http.put(SNIPPETS, "{}", headers={"Authorization": f"Bearer {caller.token}"})
    body = assert_error(response, 405, "method_not_allowed")
    assert body["message"] == 'Method "PUT" not allowed.'
    assert response["Allow"] == "GET, POST, HEAD, OPTIONS"
    response = post_raw(caller, SNIPPETS, "identifier=x", content_type="text/plain")
    assert_error(response, 415, "unsupported_media_type")
    assert Snippet.objects.count() == 0


def assert_throttled(response) -> None:
    body = assert_error(response, 429, "throttled")
    assert 1 <= body["extra"]["retry_after"] <= 60
    assert response["Retry-After"] == str(body["extra"]["retry_after"])


def test_missing_and_invalid_tokens_are_throttled_per_address(client, settings):
    settings.API_ANON_RATE_LIMIT = "3/min"
    invalid = {"Authorization": "Bearer " + "x" * 40}
    assert [client.get(SNIPPETS, headers=invalid).status_code for _ in range(2)] == [401, 401]
    assert_error(client.get(SNIPPETS), 401, "not_authenticated")
    assert_throttled(client.get(SNIPPETS, headers=invalid))
    assert_throttled(client.get(SNIPPETS))
    assert_throttled(client.post(SNIPPETS, SNIPPET, content_type="application/json"))
    assert_error(client.get(SNIPPETS, REMOTE_ADDR="192.0.2.7"), 401, "not_authenticated")
    assert Snippet.objects.count() == 0


def test_a_forwarded_for_header_does_not_change_the_counted_address(client, settings):
    settings.API_ANON_RATE_LIMIT = "2/min"
    statuses = [
        client.get(SNIPPETS, headers={"X-Forwarded-For": f"198.51.100.{n}"}).status_code for n in range(3)
    ]
    assert statuses == [401, 401, 429]


def test_missing_scope_refusals_are_throttled_per_address_and_valid_clients_are_not(make_caller, settings):
    settings.API_ANON_RATE_LIMIT = "2/min"
    reader, writer = make_caller("snippets:read"), make_caller("snippets:read", "snippets:write")
    assert [reader.post(SNIPPETS, SNIPPET).status_code for _ in range(2)] == [403, 403]
    assert_throttled(reader.post(SNIPPETS, SNIPPET))
    assert Snippet.objects.count() == 0
    # The same address, with a token allowed to do what it asks: its own client rate applies.
    assert reader.get(SNIPPETS).status_code == 200
    assert writer.post(SNIPPETS, SNIPPET).status_code == 201


def test_requests_a_view_lets_through_without_a_token_count_against_the_address(client, settings):
    settings.API_ANON_RATE_LIMIT = "2/min"
    assert [client.get("/api/docs/").status_code for _ in range(2)] == [200, 200]
    assert_throttled(client.get("/api/docs/"))
