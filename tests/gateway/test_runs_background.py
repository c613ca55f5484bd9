"""The embedded default runs a run's steps in the background: ``POST /runs`` answers 202 before the
model has answered, and ``GET runs/{id}/events`` forwards the model's text while the step runs
(agents/runtime/queue.py, agents/runtime/live.py).

These tests commit for real (``transaction=True``): the steps run on other threads, with their own
database connections, so they must see the run the request committed.
"""

from __future__ import annotations

import json
import random
import string
import threading

import pytest

from agents.models import AgentRun, RunStatus
from agents.runtime.queue import BACKGROUND
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

RUNS = "/api/v1/runs"
WAIT_SECONDS = 60  # an upper bound for a loaded machine, never a measured figure


@pytest.fixture(autouse=True)
def in_background(settings):
    settings.AGENT_RUNS_IN_BACKGROUND = True
    yield
    assert BACKGROUND.wait(WAIT_SECONDS), "background steps still running after the test"


@pytest.fixture
def setup(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    return configuration, caller


def start(caller, configuration) -> str:
    response = caller.post(RUNS, {"configuration": configuration.identifier, "input": "Summarise our tone."})
    assert response.status_code == 202, response.content
    assert response.json()["status"] in (RunStatus.QUEUED, RunStatus.RUNNING)
    return response.json()["id"]


def test_create_answers_before_the_model_has_answered_and_the_run_completes_after(setup, fake_provider):
    configuration, caller = setup
    gate = threading.Event()
    fake_provider.script(Reply(text="The tone is plain and direct.", gate=gate))
    run_id = start(caller, configuration)
    # The answer came while the provider was still holding its reply: the request did not run the loop.
    assert not gate.is_set()
    gate.set()
    assert BACKGROUND.wait(WAIT_SECONDS)
    run = AgentRun.objects.get(pk=run_id)
    assert (run.status, run.termination_reason) == (RunStatus.COMPLETED, "completed")
    assert len(fake_provider.requests) == 1


def test_events_forward_the_text_while_the_model_is_still_answering(setup, fake_provider):
    configuration, caller = setup
    gate = threading.Event()
    fake_provider.script(Reply(text="First piece, and then the rest of it.", gate=gate))
    run_id = start(caller, configuration)
    response = caller.get(f"{RUNS}/{run_id}/events", headers={"Accept": "text/event-stream"})
    chunks = iter(response.streaming_content)
    first = b""
    while b"event: delta" not in first:
        first += next(chunks)
    assert b'"text":"First "' in first
    assert not gate.is_set()  # the provider is holding the rest of its answer
    gate.set()
    rest = b"".join(chunks).decode()
    events = [block for block in (first.decode() + rest).split("\n\n") if "event: " in block]
    names = [line[7:] for block in events for line in block.splitlines() if line.startswith("event: ")]
    assert names == ["delta"] * names.count("delta") + ["step", "run"]
    texts = [json.loads(block.split("data: ", 1)[1])["text"] for block in events if "event: delta" in block]
    assert "".join(texts) == "First piece, and then the rest of it."
    final = json.loads(events[-1].split("data: ", 1)[1])
    assert (final["status"], final["answer"]) == ("completed", "First piece, and then the rest of it.")


def test_a_secret_in_the_answer_is_redacted_in_the_deltas_and_the_answer(setup, fake_provider):
    configuration, caller = setup
    rng = random.Random(17)
    token = "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    fake_provider.script(Reply(text=f"Use {token} to deploy."))
    run_id = start(caller, configuration)
    assert BACKGROUND.wait(WAIT_SECONDS)
    body = b"".join(caller.get(f"{RUNS}/{run_id}/events").streaming_content).decode()
    assert token[4:12] not in body and token not in body
    blocks = [block for block in body.split("\n\n") if "event: delta" in block]
    text = "".join(json.loads(block.split("data: ", 1)[1])["text"] for block in blocks)
    assert text == "Use [REDACTED:github_token] to deploy."
    assert '"answer":"Use [REDACTED:github_token] to deploy."' in body
