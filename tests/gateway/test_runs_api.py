"""Runs over the API: create (202), the client's own list and detail, cancel, and the event stream."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from agents.models import AgentRun, RunStatus
from agents.services import run_create
from gateway.apis import run_events
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration, run_to_end
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/runs"


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(
        fake_provider,
        model_input_price_per_million=Decimal("2.50"),
        model_output_price_per_million=Decimal("10"),
    )
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    return configuration, caller


def events_of(response) -> list[tuple[str | None, str, str]]:
    """(id, event, data) per event of an SSE body; comments and the retry hint are skipped."""
    parsed = []
    for block in b"".join(response.streaming_content).decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "event" in fields:
            parsed.append((fields.get("id"), fields["event"], fields["data"]))
    return parsed


def test_create_answers_202_with_location_and_runs_the_steps(
    setup, fake_provider, django_capture_on_commit_callbacks
):
    configuration, caller = setup
    fake_provider.script(Reply(text="Done.", prompt_tokens=50, completion_tokens=3))
    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(RUNS, {"configuration": configuration.identifier, "input": "Go."})
    assert response.status_code == 202
    run = AgentRun.objects.get()
    assert response["Location"] == f"/api/v1/runs/{run.id}"
    assert response.json()["id"] == str(run.id)
    assert (run.api_client, run.input_data_class) == (caller.client, DataClass.PUBLIC_CONTENT)
    detail = caller.get(response["Location"]).json()
    assert detail["status"] == "completed"
    assert detail["totals"] == {
        "prompt_tokens": 50,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "completion_tokens": 3,
        "cost": "0.0001550000",  # (50 x 2.50 + 3 x 10) per million
    }
    step = detail["steps"][0]
    assert step["usage"]["provenance"] == "provider_reported"
    assert step["context_usage"] == {
        "used_tokens": {"value": 50, "provenance": "provider_reported"},
        "context_window": 128_000,
        "model": "gpt-4o",
    }
    assert detail["context_usage"]["used_tokens"] == {"value": 50, "provenance": "provider_reported"}
    assert [m["role"] for m in detail["messages"]] == ["assistant"]


def test_create_keeps_caller_context_classes_and_the_requested_input_class(
    setup, django_capture_on_commit_callbacks
):
    configuration, caller = setup
    context = [{"name": "brief", "text": "Notes.", "data_class": "source_code"}]
    with django_capture_on_commit_callbacks(execute=False):
        caller.post(
            RUNS,
            {
                "configuration": configuration.identifier,
                "input": "Go.",
                "input_data_class": "editor_content",
                "context": context,
            },
        )
    run = AgentRun.objects.get()
    assert run.input_data_class == "editor_content"
    assert run.caller_context == context


def test_create_for_a_configuration_not_allowed_is_404_and_stores_nothing(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("runs:create")
    assert_error(
        caller.post(RUNS, {"configuration": configuration.identifier, "input": "Go."}), 404, "not_found"
    )
    assert AgentRun.objects.count() == 0
    assert fake_provider.requests == []


def test_create_needs_the_create_scope(setup, fake_provider, make_caller):
    configuration, _ = setup
    reader = make_caller("runs:read", configurations=(configuration,))
    error = assert_error(
        reader.post(RUNS, {"configuration": configuration.identifier, "input": "Go."}),
        403,
        "permission_denied",
    )
    assert error["extra"] == {"required_scope": "runs:create"}
    assert AgentRun.objects.count() == 0


def test_list_shows_only_the_clients_own_runs(setup, make_caller, django_capture_on_commit_callbacks):
    configuration, caller = setup
    other = make_caller("runs:create", "runs:read", configurations=(configuration,))
    mine = run_create(configuration=configuration, input_text="a", api_client=caller.client)
    run_create(configuration=configuration, input_text="b", api_client=other.client)
    run_create(configuration=configuration, input_text="c")
    response = caller.get(RUNS)
    assert [item["id"] for item in response.json()["results"]] == [str(mine.id)]


def test_another_clients_run_is_404_for_detail_cancel_and_events(setup, make_caller):
    configuration, caller = setup
    other = make_caller("runs:create", "runs:read", configurations=(configuration,))
    run = run_create(configuration=configuration, input_text="theirs", api_client=other.client)
    assert_error(caller.get(f"{RUNS}/{run.id}"), 404, "not_found")
    assert_error(caller.post(f"{RUNS}/{run.id}/cancel"), 404, "not_found")
    assert_error(caller.get(f"{RUNS}/{run.id}/events"), 404, "not_found")
    run.refresh_from_db()
    assert run.cancel_requested is False


def test_malformed_run_id_is_404(setup):
    _, caller = setup
    assert_error(caller.get(f"{RUNS}/not-a-uuid"), 404, "not_found")


def test_cancel_stops_a_queued_run(setup):
    configuration, caller = setup
    run = run_create(configuration=configuration, input_text="x", api_client=caller.client)
    response = caller.post(f"{RUNS}/{run.id}/cancel")
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["termination_reason"]) == ("cancelled", "cancelled")


def test_cancel_of_a_finished_run_is_409(setup, fake_provider, django_capture_on_commit_callbacks):
    configuration, caller = setup
    run = run_to_end(django_capture_on_commit_callbacks, configuration, api_client=caller.client)
    assert run.status == RunStatus.COMPLETED
    error = assert_error(caller.post(f"{RUNS}/{run.id}/cancel"), 409, "run_finished")
    assert error["extra"] == {"status": "completed"}


def test_cancel_needs_the_create_scope(setup, make_caller):
    configuration, caller = setup
    run = run_create(configuration=configuration, input_text="x", api_client=caller.client)
    reader = make_caller("runs:read")
    assert_error(reader.post(f"{RUNS}/{run.id}/cancel"), 403, "permission_denied")
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


def test_events_stream_each_step_then_the_run(setup, fake_provider, django_capture_on_commit_callbacks):
    configuration, caller = setup
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tag": "tone"})), Reply(text="Done."))
    run = run_to_end(django_capture_on_commit_callbacks, configuration, api_client=caller.client)
    response = caller.get(f"{RUNS}/{run.id}/events", headers={"Accept": "text/event-stream"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    events = events_of(response)
    assert [(event_id, name) for event_id, name, _ in events] == [
        (None, "tool_call"),
        ("0", "step"),
        (None, "delta"),
        ("1", "step"),
        (None, "run"),
    ]
    assert json.loads(events[0][2]) == {
        "step": 0,
        "id": "c1",
        "name": "snippets_by_tag",
        "arguments": '{"tag":"tone"}',
    }
    assert json.loads(events[2][2]) == {"step": 1, "text": "Done."}
    final = json.loads(events[-1][2])
    assert (final["status"], final["answer"]) == ("completed", "Done.")


def test_events_resume_after_last_event_id(setup, fake_provider, django_capture_on_commit_callbacks):
    configuration, caller = setup
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tag": "tone"})), Reply(text="Done."))
    run = run_to_end(django_capture_on_commit_callbacks, configuration, api_client=caller.client)
    response = caller.get(f"{RUNS}/{run.id}/events", headers={"Last-Event-ID": "0"})
    assert [(event_id, name) for event_id, name, _ in events_of(response)] == [
        (None, "delta"),
        ("1", "step"),
        (None, "run"),
    ]


def test_events_of_an_unfinished_run_end_with_timeout(setup, monkeypatch):
    configuration, caller = setup
    monkeypatch.setattr(run_events, "POLL_SECONDS", 0.01)
    run = run_create(configuration=configuration, input_text="x", api_client=caller.client)
    response = caller.get(f"{RUNS}/{run.id}/events", {"timeout": 0})
    events = events_of(response)
    assert [name for _, name, _ in events] == ["timeout"]
    assert '"status":"queued"' in events[0][2]


def test_events_timeout_is_bounded(setup):
    configuration, caller = setup
    run = run_create(configuration=configuration, input_text="x", api_client=caller.client)
    error = assert_error(caller.get(f"{RUNS}/{run.id}/events", {"timeout": 121}), 400, "invalid_input")
    assert error["extra"]["codes"] == {"timeout": ["max_value"]}


def test_events_errors_are_json_even_when_only_event_stream_is_accepted(setup):
    _, caller = setup
    response = caller.get(
        f"{RUNS}/00000000-0000-0000-0000-000000000000/events", headers={"Accept": "text/event-stream"}
    )
    assert_error(response, 404, "not_found")
