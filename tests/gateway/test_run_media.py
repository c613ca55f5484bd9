"""A run's task may carry images and PDFs, as a completion's may: ``POST /api/v1/runs`` with
``messages`` whose first user message holds ``image_url`` or ``file`` parts. Each part reaches the wire
at every step, is counted by the estimator and governed as a source of its class; a model without the
modality refuses the run with a 400 before anything is stored or sent; what the run stores is redacted.

Images and PDFs are made at test time (tests/media_files.py); canary secrets are drawn at test time.
"""

from __future__ import annotations

import json

import pytest

from agents.models import AgentRun, AgentStep
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply
from tests.media_files import data_url, pdf, png

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/runs"
GITHUB = {canary.kind: canary for canary in generate_canaries(seed=20261208)}["github_classic_pat"]
IMAGE = data_url(png(1024, 1024), "image/png")
IMAGE_PART = {"type": "image_url", "image_url": {"url": IMAGE, "detail": "high"}}


def setup(fake_provider, make_caller, **fields):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, **fields)
    return make_caller("runs:create", "runs:read", configurations=(configuration,)), configuration


def start(caller, configuration, *parts, capture, messages=None):
    content = [{"type": "text", "text": "What does this show?"}, *parts]
    body = {
        "configuration": configuration.identifier,
        "messages": messages or [{"role": "user", "content": content}],
        "input_data_class": DataClass.PUBLIC_CONTENT,
    }
    with capture(execute=True):
        return caller.post(RUNS, body)


def test_a_runs_image_reaches_the_wire_is_counted_and_governed(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    caller, configuration = setup(fake_provider, make_caller)
    fake_provider.script(Reply(text="A grey square."), Reply(text="Nothing."))

    with_image = start(caller, configuration, IMAGE_PART, capture=django_capture_on_commit_callbacks)
    without = start(caller, configuration, capture=django_capture_on_commit_callbacks)

    assert (with_image.status_code, without.status_code) == (202, 202), with_image.content
    first = fake_provider.requests[0].body["messages"][-1]["content"]
    assert first == [{"type": "text", "text": "What does this show?"}, IMAGE_PART]
    runs = [AgentRun.objects.get(id=r.json()["id"]) for r in (with_image, without)]
    assert [run.status for run in runs] == ["completed", "completed"]
    estimates = [AgentStep.objects.get(run=run).estimated_prompt_tokens for run in runs]
    # OpenAI's vision guide ("Calculating costs"): a 1024x1024 image in high detail costs 765 tokens.
    assert estimates[0] - estimates[1] == 765
    step = AgentStep.objects.get(run=runs[0])
    sources = {(i, s["kind"], s["data_class"]) for s in step.receipt["sources"] for i in s["identifiers"]}
    assert ("messages[0].content[1]", "caller_context", DataClass.PUBLIC_CONTENT) in sources


def test_a_part_above_the_zone_is_refused_at_its_step_and_nothing_is_sent(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    caller, configuration = setup(fake_provider, make_caller)
    secret_part = {**IMAGE_PART, "data_class": DataClass.SECRET_ADJACENT}

    response = start(caller, configuration, secret_part, capture=django_capture_on_commit_callbacks)

    assert response.status_code == 202
    run = AgentRun.objects.get(id=response.json()["id"])
    assert run.status == "failed"
    assert fake_provider.requests == []
    refused = GovernanceEvent.objects.get(source_identifier="messages[0].content[1]")
    assert (refused.decision, refused.data_class) == ("context_blocked", DataClass.SECRET_ADJACENT)


def test_a_model_without_the_modality_refuses_the_run_before_anything_is_stored(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    caller, configuration = setup(fake_provider, make_caller, model_input_modalities=[])

    response = start(caller, configuration, IMAGE_PART, capture=django_capture_on_commit_callbacks)

    assert response.status_code == 400, response.content
    error = response.json()
    assert error["code"] == "modality_not_supported"
    assert error["extra"] == {"modality": "image", "model": "gpt-4o"}
    assert AgentRun.objects.count() == 0
    assert fake_provider.requests == []


def test_a_pdf_holding_a_secret_is_stored_and_sent_as_its_redacted_text(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    caller, configuration = setup(fake_provider, make_caller)
    fake_provider.script(Reply(text="A deploy note."))
    document = data_url(pdf(f"Deploy with {GITHUB.value} tonight."), "application/pdf")
    part = {"type": "file", "file": {"filename": "deploy.pdf", "file_data": document}}

    response = start(caller, configuration, part, capture=django_capture_on_commit_callbacks)

    assert response.status_code == 202, response.content
    run = AgentRun.objects.get(id=response.json()["id"])
    assert run.status == "completed"
    stored = json.dumps(run.conversation)
    assert GITHUB.value not in stored and "[REDACTED:github_token]" in stored
    assert GITHUB.value not in fake_provider.wire_text()
    sent = fake_provider.requests[0].body["messages"][-1]["content"]
    assert [piece["type"] for piece in sent] == ["text", "text"]
    assert "[REDACTED:github_token]" in sent[1]["text"]


def test_media_after_the_task_is_refused(fake_provider, make_caller, django_capture_on_commit_callbacks):
    caller, configuration = setup(fake_provider, make_caller)
    messages = [
        {"role": "user", "content": "Describe the chart I will send."},
        {"role": "assistant", "content": "Send it."},
        {"role": "user", "content": [{"type": "text", "text": "Here."}, IMAGE_PART]},
    ]

    response = start(caller, configuration, capture=django_capture_on_commit_callbacks, messages=messages)

    assert response.status_code == 400
    assert response.json()["code"] == "media_refused"
    assert AgentRun.objects.count() == 0
