"""Configurations, the context preview and completions: classification, governance and the fit."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.models import AgentRun
from catalog.models import Configuration, LlmModel
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import configuration_make, snippet_make
from tests.fakes.provider_server import Reply, server_error
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/context/preview"
COMPLETIONS = "/api/v1/completions"


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", configurations=(configuration,))
    return configuration, caller


def body(configuration: Configuration, **fields):
    return {"configuration": configuration.identifier, "input": "Summarise the launch.", **fields}


def test_configurations_lists_only_those_the_client_may_use(setup):
    configuration, caller = setup
    configuration_make()
    response = caller.get("/api/v1/configurations")
    assert response.status_code == 200
    assert [item["identifier"] for item in response.json()["results"]] == [configuration.identifier]
    item = response.json()["results"][0]
    assert (item["zone"], item["model"], item["context_window"]) == ("external_eu", "gpt-4o", 128_000)


def test_configurations_need_the_use_scope(make_caller):
    assert_error(make_caller("runs:read").get("/api/v1/configurations"), 403, "permission_denied")


def test_preview_shows_every_source_and_records_and_sends_nothing(setup, fake_provider):
    configuration, caller = setup
    context = [{"name": "brief", "text": "Launch notes.", "data_class": "internal_configuration"}]
    response = caller.post(PREVIEW, body(configuration, context=context))
    assert response.status_code == 200
    preview = response.json()
    assert preview["would_send"] is True
    assert [(s["kind"], s["data_class"], s["outcome"]) for s in preview["decision"]["sources"]] == [
        ("system_prompt", "public_content", "allowed"),
        ("caller_context", "internal_configuration", "allowed"),
        ("task_input", "public_content", "allowed"),
    ]
    assert preview["messages"][-1]["parts"][-1] == {
        "kind": "task_input",
        "identifier": "task_input",
        "data_class": "public_content",
        "withheld": False,
        "text": "Summarise the launch.",
    }
    assert GovernanceEvent.objects.count() == 0
    assert fake_provider.requests == []


def test_preview_input_class_defaults_to_the_clients_default(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)
    caller = make_caller(
        "configurations:use", configurations=(configuration,), default_input_data_class=DataClass.SOURCE_CODE
    )
    preview = caller.post(PREVIEW, body(configuration)).json()
    task = preview["decision"]["sources"][-1]
    assert (task["kind"], task["data_class"], task["outcome"]) == ("task_input", "source_code", "refused")
    assert preview["would_send"] is False


@pytest.mark.parametrize("path", [PREVIEW, COMPLETIONS])
def test_unknown_and_not_allowed_configurations_are_the_same_404(setup, path, fake_provider):
    _, caller = setup
    other = configuration_make()
    unknown = assert_error(
        caller.post(path, {"configuration": "no-such-thing", "input": "x"}), 404, "not_found"
    )
    hidden = assert_error(
        caller.post(path, {"configuration": other.identifier, "input": "x"}), 404, "not_found"
    )
    assert unknown["message"].replace("no-such-thing", "X") == hidden["message"].replace(
        other.identifier, "X"
    )
    assert fake_provider.requests == []


@pytest.mark.parametrize(
    ("context", "field_path"),
    [
        ([{"name": "brief", "text": "x"}], "data_class"),
        ([{"name": "brief", "text": "x", "data_class": "top_secret"}], "data_class"),
        ([{"name": "n" * 201, "text": "x", "data_class": "public_content"}], "name"),
        ([{"name": "brief", "text": "x" * 100_001, "data_class": "public_content"}], "text"),
    ],
)
@pytest.mark.parametrize("path", [PREVIEW, COMPLETIONS, "/api/v1/runs"])
def test_caller_context_items_must_be_validly_classified(
    make_caller, fake_provider, path, context, field_path
):
    configuration = fake_configuration(fake_provider)
    caller = make_caller(configurations=(configuration,))
    response = caller.post(path, body(configuration, context=context))
    error = assert_error(response, 400, "invalid_input")
    assert list(error["extra"]["fields"]["context"]["0"]) == [field_path]
    assert (GovernanceEvent.objects.count(), AgentRun.objects.count(), fake_provider.requests) == (0, 0, [])


@pytest.mark.parametrize(
    ("fields", "field", "code"),
    [
        ({"input": "x" * 100_001}, "input", "max_length"),
        ({"input": ""}, "input", "blank"),
        ({"input_data_class": "top_secret"}, "input_data_class", "invalid_choice"),
        ({"max_tokens": 0}, "max_tokens", "min_value"),
        ({"skills": [0]}, "skills", None),
    ],
)
def test_request_fields_are_limited(setup, fake_provider, fields, field, code):
    configuration, caller = setup
    error = assert_error(caller.post(COMPLETIONS, body(configuration, **fields)), 400, "invalid_input")
    assert list(error["extra"]["fields"]) == [field]
    if code:
        assert error["extra"]["codes"][field] == [code]
    assert fake_provider.requests == []


def test_more_than_50_context_items_is_400(setup, fake_provider):
    configuration, caller = setup
    items = [{"name": f"i{n}", "text": "x", "data_class": "public_content"} for n in range(51)]
    error = assert_error(caller.post(COMPLETIONS, body(configuration, context=items)), 400, "invalid_input")
    assert error["extra"]["codes"] == {"context": {"non_field_errors": ["max_length"]}}
    assert fake_provider.requests == []


def test_unknown_request_skills_are_400(setup, fake_provider):
    configuration, caller = setup
    error = assert_error(caller.post(COMPLETIONS, body(configuration, skills=[4242])), 400, "unknown_skills")
    assert error["extra"] == {"skills": [4242]}
    assert fake_provider.requests == []


def test_completion_returns_the_reply_usage_its_cost_and_breakdown(setup, fake_provider):
    configuration, caller = setup
    # gpt-4o's list prices (catalog/pricing.py): input 2.50, cached input 1.25, output 10 per million.
    LlmModel.objects.filter(pk=configuration.model_id).update(
        input_price_per_million=Decimal("2.50"),
        cached_input_price_per_million=Decimal("1.25"),
        output_price_per_million=Decimal("10"),
    )
    fake_provider.script(
        Reply(text="Launch summary.", prompt_tokens=120, cached_tokens=20, completion_tokens=5)
    )
    response = caller.post(COMPLETIONS, body(configuration))
    assert response.status_code == 200
    completion = response.json()
    assert completion["text"] == "Launch summary."
    assert completion["finish_reason"] == "stop"
    assert completion["usage"] == {
        "prompt_tokens": 120,
        "cached_tokens": 20,
        "cache_write_tokens": None,  # the OpenAI wire reports no cache writes
        "completion_tokens": 5,
        "provenance": "provider_reported",
        "cost": "0.0003250000",  # (100 x 2.50 + 20 x 1.25 + 5 x 10) per million
    }
    assert completion["model"] == "gpt-4o"
    assert completion["breakdown"]["window"] == 128_000
    assert len(fake_provider.requests) == 1
    assert AgentRun.objects.count() == 0
    record = CompletionRecord.objects.get()
    assert (record.request_id, record.api_client, record.configuration, record.model_id) == (
        completion["request_id"],
        caller.client,
        configuration,
        configuration.model_id,
    )
    assert (record.prompt_tokens, record.cached_tokens, record.cache_write_tokens) == (120, 20, None)
    assert (record.completion_tokens, record.cost) == (5, Decimal("0.000325"))


def test_refused_completion_is_403_with_the_decision_and_sends_nothing(fake_provider, make_caller):
    snippet_make(
        identifier="runbook",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    caller = make_caller("configurations:use", configurations=(configuration,))
    error = assert_error(caller.post(COMPLETIONS, body(configuration)), 403, "context_refused")
    refused = [s for s in error["extra"]["decision"]["sources"] if s["outcome"] == "refused"]
    assert [(s["kind"], s["identifier"]) for s in refused] == [("snippet", "runbook")]
    assert fake_provider.requests == []
    assert AgentRun.objects.count() == 0
    event = GovernanceEvent.objects.get()
    assert (event.correlation_id, event.api_client, event.configuration) == (
        error["extra"]["request_id"],
        caller.client.name,
        configuration.identifier,
    )


def test_caller_context_above_the_zone_is_refused(setup, fake_provider):
    configuration, caller = setup
    context = [{"name": "logs", "text": "trace", "data_class": "system_diagnostics"}]
    error = assert_error(
        caller.post(COMPLETIONS, body(configuration, context=context)), 403, "context_refused"
    )
    assert "'context[0]'" in error["message"] and "logs" not in error["message"]
    assert fake_provider.requests == []


def test_overflow_is_422_with_the_breakdown_and_sends_nothing(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, model_context_window=300, model_max_output_tokens=100)
    caller = make_caller("configurations:use", configurations=(configuration,))
    error = assert_error(
        caller.post(COMPLETIONS, body(configuration, input="word " * 400)), 422, "context_overflow"
    )
    breakdown = error["extra"]["breakdown"]
    assert breakdown["window"] == 300
    assert breakdown["remaining"] < 0
    assert fake_provider.requests == []


def test_provider_failure_is_502_with_its_class(setup, fake_provider):
    configuration, caller = setup
    fake_provider.script(server_error())
    error = assert_error(caller.post(COMPLETIONS, body(configuration)), 502, "provider_error")
    assert error["extra"]["failure_class"] == "server_error"
    assert error["extra"]["retryable"] is True
    assert len(fake_provider.requests) == 1


def test_inactive_configuration_is_409_and_sends_nothing(setup, fake_provider):
    configuration, caller = setup
    Configuration.objects.filter(pk=configuration.pk).update(is_active=False)
    assert_error(caller.post(COMPLETIONS, body(configuration)), 409, "configuration_inactive")
    assert fake_provider.requests == []


@pytest.mark.parametrize("path", [PREVIEW, COMPLETIONS])
def test_preview_and_completions_need_the_use_scope(fake_provider, make_caller, path):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    error = assert_error(caller.post(path, body(configuration)), 403, "permission_denied")
    assert error["extra"] == {"required_scope": "configurations:use"}
    assert fake_provider.requests == []
