"""The OpenAPI document: it validates without warnings, documents every endpoint, and a bounded
schemathesis run against it finds no server error and no response that breaks the schema.

schemathesis drives the Django WSGI application in-process (no port, no network). Generation is
positive only (valid requests per the schema) with a fixed seed and at most 10 examples per operation.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.agents.runs import fake_configuration
from tests.factories import skill_make, snippet_make

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.mark.django_db
def test_schema_validates_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert "BearerToken" in (tmp_path / "schema.yaml").read_text()


@pytest.mark.django_db
def test_every_endpoint_is_documented_with_the_error_format(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    operations = {(path, method) for path, item in schema["paths"].items() for method in item}
    assert operations == {
        ("/api/v1/snippets", "get"),
        ("/api/v1/snippets", "post"),
        ("/api/v1/snippets/{identifier}", "get"),
        ("/api/v1/snippets/{identifier}", "patch"),
        ("/api/v1/snippets/{identifier}", "delete"),
        ("/api/v1/skills", "get"),
        ("/api/v1/skills/{skill_id}", "get"),
        ("/api/v1/skill-sources", "post"),
        ("/api/v1/skill-sources/{source_id}", "get"),
        ("/api/v1/skill-sources/{source_id}/sync", "post"),
        ("/api/v1/configurations", "get"),
        ("/api/v1/configurations/{identifier}/declassification", "post"),
        ("/api/v1/budget", "get"),
        ("/api/v1/context/preview", "post"),
        ("/api/v1/completions", "post"),
        ("/api/v1/runs", "get"),
        ("/api/v1/runs", "post"),
        ("/api/v1/runs/{run_id}", "get"),
        ("/api/v1/runs/{run_id}/cancel", "post"),
        ("/api/v1/runs/{run_id}/events", "get"),
        ("/api/v1/runs/{run_id}/approvals", "get"),
        ("/api/v1/runs/{run_id}/approvals/{approval_id}", "post"),
        ("/api/v1/scores", "post"),
        ("/api/v1/governance/events", "get"),
        ("/api/v1/governance/readiness", "get"),
        ("/api/openai/v1/chat/completions", "post"),
        ("/api/openai/v1/responses", "post"),
        ("/api/openai/v1/embeddings", "post"),
        ("/api/openai/v1/models", "get"),
        ("/api/openai/v1/models/{model}", "get"),
        ("/api/anthropic/v1/messages", "post"),
        ("/api/anthropic/v1/messages/count_tokens", "post"),
    }
    for path, item in schema["paths"].items():
        # The OpenAI and Anthropic APIs answer errors in their own shape, which their clients parse;
        # Anthropic's clients may send the token as x-api-key.
        error, security = "Error", [{"BearerToken": []}]
        if path.startswith("/api/openai/"):
            error = "OpenAIError"
        elif path.startswith("/api/anthropic/"):
            error, security = "AnthropicError", [{"BearerToken": []}, {"ApiKeyHeader": []}]
        for method, operation in item.items():
            assert operation["security"] == security, (path, method)
            for status in ("401", "403", "429"):
                ref = operation["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                assert ref == f"#/components/schemas/{error}", (path, method, status)
    completions = schema["paths"]["/api/v1/completions"]["post"]["responses"]
    assert {"200", "400", "403", "404", "409", "413", "422", "502"} <= set(completions)
    events = schema["paths"]["/api/v1/runs/{run_id}/events"]["get"]["responses"]["200"]["content"]
    assert list(events) == ["text/event-stream"]
    chat = schema["paths"]["/api/openai/v1/chat/completions"]["post"]["responses"]
    assert set(chat["200"]["content"]) == {"application/json", "text/event-stream"}
    assert {"400", "404", "409", "502"} <= set(chat)
    responses = schema["paths"]["/api/openai/v1/responses"]["post"]["responses"]
    assert set(responses["200"]["content"]) == {"application/json", "text/event-stream"}
    assert {"400", "404", "409", "502"} <= set(responses)
    messages = schema["paths"]["/api/anthropic/v1/messages"]["post"]["responses"]
    assert set(messages["200"]["content"]) == {"application/json", "text/event-stream"}
    assert {"400", "404", "409", "413", "502"} <= set(messages)


@pytest.mark.django_db
def test_fuzzed_requests_get_no_server_error_and_match_the_schema(
    make_caller, fake_provider, tmp_path, settings
):
    settings.API_RATE_LIMIT = "100000/min"  # the fuzzer's ~200 requests must not be throttled
    configuration = fake_configuration(fake_provider)
    snippet_make(identifier="tone", tags=("tone",))
    skill_make(tmp_path)
    caller = make_caller(configurations=(configuration,))
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", WSGIHandler())
    headers = {"Authorization": f"Bearer {caller.token}"}
    tested = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy(headers=headers))
        @hypothesis_settings(
            max_examples=10,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def exercise(case):
            response = case.call()
            case.validate_response(response, checks=CHECKS)

        exercise()
        tested += 1
    assert tested == 32
