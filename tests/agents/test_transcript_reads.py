"""A step reads its run's transcript rows only when its worker does not hold them all: the claim
counts the run's stored messages, and a worker holds the messages its own steps stored
(``agents/runtime/transcript.py``, ``TranscriptCache``). What the model is sent is the same either
way."""

from __future__ import annotations

import pytest

import agents.runtime.step
import agents.runtime.transcript
from agents.models import AgentRun, RunMessage
from agents.runtime.step import step_run
from agents.runtime.transcript import TRANSCRIPTS
from agents.services import run_create
from catalog.models import Configuration
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply

# The fast suite runs on SQLite, the services suite on PostgreSQL: each runs the variant marked for it.
DATABASES = [
    pytest.param("default", marks=pytest.mark.django_db),
    pytest.param("services", marks=[pytest.mark.services, pytest.mark.django_db(transaction=True)]),
]
TOOL_CALL = Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]}))


def started_run(configuration: Configuration) -> AgentRun:
    return run_create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )


@pytest.fixture(autouse=True)
def steps_driven_here(monkeypatch) -> None:
    """Each test runs its steps itself: a step's enqueue of the next one does nothing."""
    monkeypatch.setattr(agents.runtime.step, "step_enqueue", lambda **enqueued: None)


@pytest.fixture
def reads(monkeypatch) -> list[tuple[str, int]]:
    """Each read of a run's transcript rows: the run and the position it read from."""
    seen: list[tuple[str, int]] = []
    original = agents.runtime.transcript._rows_from

    def counted(run, position):
        seen.append((str(run.id), position))
        return original(run, position)

    monkeypatch.setattr(agents.runtime.transcript, "_rows_from", counted)
    return seen


@pytest.mark.parametrize("database", DATABASES)
def test_steps_in_the_worker_that_stored_the_transcript_read_no_rows_and_send_what_a_read_sends(
    database, fake_provider, reads, django_capture_on_commit_callbacks
):
    snippet_make(identifier="tone", name="Tone", text="Warm and brief.", tags=("tone",))
    fake_provider.script(TOOL_CALL, Reply(text="Done."), TOOL_CALL, Reply(text="Done."))
    configuration = fake_configuration(fake_provider)
    held, cold = started_run(configuration), started_run(configuration)

    with django_capture_on_commit_callbacks(execute=True):  # as each statement's commit runs them
        assert step_run(run_id=str(held.id), step_index=0, worker="w1").action == "advanced"
    assert step_run(run_id=str(held.id), step_index=1, worker="w1").reason == "completed"
    assert reads == []  # the first step's run had no message, the second's were this worker's own

    assert step_run(run_id=str(cold.id), step_index=0, worker="w1").action == "advanced"
    TRANSCRIPTS.runs.clear()  # the next step runs in a worker that holds nothing of the run
    assert step_run(run_id=str(cold.id), step_index=1, worker="w2").reason == "completed"
    assert reads == [(str(cold.id), 0)]

    bodies = fake_provider.bodies()
    assert [m["role"] for m in bodies[1]["messages"]] == ["system", "user", "assistant", "tool"]
    assert bodies[1]["messages"] == bodies[3]["messages"]
    for run in (held, cold):
        assert list(RunMessage.objects.filter(run=run).values_list("position", "role")) == [
            (0, "assistant"),
            (1, "tool"),
            (2, "assistant"),
        ]


@pytest.mark.django_db
def test_a_held_transcript_shorter_than_the_stored_one_reads_the_rows_after_it(
    fake_provider, reads, django_capture_on_commit_callbacks
):
    fake_provider.script(TOOL_CALL, Reply(text="Done."))
    run = started_run(fake_configuration(fake_provider))
    with django_capture_on_commit_callbacks(execute=True):
        assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "advanced"
    held = TRANSCRIPTS.runs.get(str(run.id))
    assert held is not None
    TRANSCRIPTS.runs.put(str(run.id), held[:1])  # as if another worker had stored the tool result

    assert step_run(run_id=str(run.id), step_index=1, worker="w1").reason == "completed"

    assert reads == [(str(run.id), 1)]
    assert [m["role"] for m in fake_provider.bodies()[1]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]


@pytest.mark.django_db
def test_a_message_whose_write_did_not_commit_is_never_held(fake_provider, reads):
    """The test's transaction never commits, so the step's writes are never held: the next step
    reads them."""
    fake_provider.script(TOOL_CALL, Reply(text="Done."))
    run = started_run(fake_configuration(fake_provider))

    assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "advanced"

    assert TRANSCRIPTS.runs.get(str(run.id)) is None
    assert step_run(run_id=str(run.id), step_index=1, worker="w1").reason == "completed"
    assert reads == [(str(run.id), 0)]


@pytest.mark.django_db
def test_a_held_transcript_longer_than_the_stored_one_is_read_anew(fake_provider, reads):
    fake_provider.script(TOOL_CALL, Reply(text="Done."))
    run = started_run(fake_configuration(fake_provider))
    assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "advanced"
    stored = TRANSCRIPTS.read(run)
    TRANSCRIPTS.runs.put(str(run.id), (*stored, stored[-1]))  # one message more than the run stored
    reads.clear()

    assert step_run(run_id=str(run.id), step_index=1, worker="w1").reason == "completed"

    assert reads == [(str(run.id), 0)]
    assert [m["role"] for m in fake_provider.bodies()[1]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
