"""Log records of API requests and of the steps they start carry the ids of their work, no content."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from agents.models import AgentRun
from config.logs import JSON_FIELDS, JsonLogFormatter, LogContextFilter
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The root logger also writes JSON lines here, through the handler set-up LOG_FORMAT=json uses."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLogFormatter())
    handler.addFilter(LogContextFilter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def parsed(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_runs_step_lines_carry_its_run_step_client_and_correlation_ids(
    fake_provider, make_caller, json_lines, django_capture_on_commit_callbacks
):
    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    configuration = fake_configuration(fake_provider)
    caller = make_caller("runs:create", configurations=(configuration,))
    canary = generate_canaries(17)[0]
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})), Reply(text="Done."))
    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(
            "/api/v1/runs", {"configuration": configuration.identifier, "input": f"Draft. {canary.context}"}
        )
    assert response.status_code == 202
    run_id = str(AgentRun.objects.get().id)
    lines = parsed(json_lines)
    finished = [line for line in lines if line["logger"] == "celery.app.trace"]
    assert [(line["step_index"], line["message"].split(": ")[-1]) for line in finished] == [
        (0, "'advanced'"),
        (1, "'finished'"),
    ]
    # The captured on-commit callbacks run the steps after the request ended (in make run they run
    # inside it, and add to its context): the step's own ids, and no request id.
    step_fields = ["time", "level", "logger", "message", "run_id", "step_index", "client", "correlation_id"]
    for line in finished:
        assert list(line) == step_fields
        assert (line["run_id"], line["correlation_id"], line["client"]) == (
            run_id,
            run_id,
            caller.client.name,
        )
    assert all(set(line) <= set(JSON_FIELDS) for line in lines)
    assert canary.secret not in json_lines.getvalue()
    assert "Draft." not in json_lines.getvalue()


def test_a_refused_requests_django_line_carries_the_request_and_correlation_ids(
    fake_provider, make_caller, json_lines
):
    snippet_make(
        identifier="runbook",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    caller = make_caller("configurations:use", configurations=(configuration,))
    response = caller.post("/api/v1/completions", {"configuration": configuration.identifier, "input": "Go."})
    assert response.status_code == 403
    (line,) = [line for line in parsed(json_lines) if line["logger"] == "django.request"]
    assert (line["level"], line["message"]) == ("WARNING", "Forbidden: /api/v1/completions")
    assert line["request_id"] == response["X-Request-ID"]
    assert line["correlation_id"] == response.json()["extra"]["request_id"]
    assert line["client"] == caller.client.name
    assert "run_id" not in line


def test_a_request_leaves_no_ids_behind(client, json_lines):
    first = client.get("/api/v1/nothing-here")
    logging.getLogger("tests").warning("after the request")
    lines = parsed(json_lines)
    assert [line["request_id"] for line in lines if line["logger"] == "django.request"] == [
        first["X-Request-ID"]
    ]
    assert [line for line in lines if line["logger"] == "tests"] == [
        {"time": lines[-1]["time"], "level": "WARNING", "logger": "tests", "message": "after the request"}
    ]


def test_extra_values_and_record_dicts_never_reach_a_json_line(json_lines):
    logging.getLogger("tests").info("named %s", "thing", extra={"body": "the text itself"})
    logging.getLogger("tests").info({"prompt": "the text itself"})
    assert "the text itself" not in json_lines.getvalue()
    assert [line["message"] for line in parsed(json_lines)] == ["named thing", ""]
