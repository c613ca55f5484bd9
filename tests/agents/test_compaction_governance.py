"""Compaction, governed: a summary is refused unsent where its model may not receive what it would
summarise, carries the label of what it replaced, and is shown only to readers that label admits;
summaries that fail are recorded and the run drops the oldest turns instead."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agents.models import AgentRun, AgentStep, ClientDailyUsage
from catalog.services import api_client_create
from gateway.apis.run_events import run_event_stream
from gateway.apis.run_output import run_detail_body
from governance.models import GovernanceEvent
from governance.vocabulary import TrustZone
from tests.agents.compaction_runs import (
    SECRET_SUMMARY,
    SUMMARY,
    compacting_configuration,
    notes,
    steps_of,
    summary_model_on,
    tool_heavy_script,
)
from tests.agents.runs import run_to_end
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def summary_fake() -> Iterator[FakeProvider]:
    """The summary model's own provider, so what it was sent is seen apart from the run's model."""
    with FakeProvider() as fake:
        yield fake


def test_a_summary_of_a_secret_turn_is_never_sent_to_a_less_trusted_model(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    notes(secret=1)
    tool_heavy_script(fake_provider)
    summary_fake.script(Reply(text=SECRET_SUMMARY))
    summarizer = summary_model_on(summary_fake, TrustZone.EXTERNAL_EU)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert summary_fake.requests == []  # refused: nothing reached the summary model
    assert (run.status, run.termination_reason) == ("completed", "completed")
    step = AgentStep.objects.get(run=run, index=5)
    assert (step.kind, step.status, step.error_code) == ("compaction", "refused", "context_refused")
    assert (step.reported_prompt_tokens, step.cost, step.label) == (None, None, "")
    assert step.compaction == {"strategy": "summarise", "through": 6, "messages": 6}
    refused = GovernanceEvent.objects.filter(run=str(run.id), step=5, decision="context_blocked")
    # The secret result, and the reply made after it (its label follows the run).
    assert sorted(refused.values_list("zone", "model", "source_kind", "source_identifier", "data_class")) == [
        ("external_eu", "gpt-4o-mini", "assistant_turn", "transcript[4]", "secret_adjacent"),
        ("external_eu", "gpt-4o-mini", "tool_output", "call_1", "secret_adjacent"),
    ]
    # The run goes on dropping the oldest turns, and every later step's tail note says why.
    bodies = fake_provider.bodies()
    note = "Compaction: a summary by gpt-4o-mini was refused (context_refused); the oldest turns are dropped instead."
    assert [b["messages"][-1]["content"].split("\n")[1] for b in bodies[5:]] == [note, note]
    assert steps_of(run)[5:] == [
        (5, "compaction", "refused"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    assert AgentStep.objects.get(run=run, index=7).breakdown["dropped_turns"] == 1


def step_events(run: AgentRun, zone: TrustZone) -> dict[int, dict]:
    events = {}
    for chunk in run_event_stream(run, after=-1, timeout=0, receiver_zone=zone):
        lines = chunk.decode().strip().split("\n")
        if "event: step" in lines:
            data = json.loads(lines[-1].removeprefix("data: "))
            events[data["index"]] = data
    return events


def test_a_summary_carries_the_label_of_the_secret_turn_it_replaced(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    results = notes(secret=1)
    tool_heavy_script(fake_provider)
    summary_fake.script(Reply(text=SECRET_SUMMARY))
    summarizer = summary_model_on(summary_fake, TrustZone.LOCAL)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    (sent,) = summary_fake.bodies()
    assert results[1] in sent["messages"][1]["content"]
    step = AgentStep.objects.get(run=run, index=5)
    assert (step.status, step.label, step.receiver_label) == (
        "completed",
        "secret_adjacent",
        "secret_adjacent",
    )
    # Shown to a reader in the run's own zone; withheld from a lower one, in run detail and events.
    local, lower = TrustZone.LOCAL, TrustZone.EXTERNAL_GLOBAL
    for zone, shown in ((local, True), (lower, False)):
        detail = run_detail_body(run, receiver_zone=zone)["steps"][5]["compaction"]
        event = step_events(run, zone)[5]["compaction"]
        expected = {"strategy": "summarise", "through": 6, "summary_withheld": not shown}
        if shown:
            expected["summary"] = SECRET_SUMMARY
        assert detail == expected
        assert event == expected


def test_a_failed_summary_is_recorded_and_the_run_drops_the_oldest_turns_until_the_next_try(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    notes()
    tool_heavy_script(fake_provider)
    summary_fake.script(Reply.failing(400, "bad request"), Reply(text=SUMMARY))
    summarizer = summary_model_on(summary_fake, TrustZone.LOCAL)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    failed = AgentStep.objects.get(run=run, index=5)
    assert (failed.kind, failed.status, failed.cost, failed.label) == ("compaction", "failed", None, "")
    after = fake_provider.bodies()[5]["messages"][-1]["content"].split("\n")[1]
    assert after == (
        f"Compaction: a summary by gpt-4o-mini failed ({failed.error_code}); "
        "the oldest turns are dropped instead."
    )
    # Tried again at the next step that is due (index 7, after the model call at 6), and it holds.
    assert steps_of(run)[5:] == [
        (5, "compaction", "failed"),
        (6, "model_call", "completed"),
        (7, "compaction", "completed"),
        (8, "model_call", "completed"),
    ]
    assert len(summary_fake.requests) == 2
    assert run.prompt_tokens_total == sum(
        AgentStep.objects.filter(run=run)
        .exclude(reported_prompt_tokens=None)
        .values_list("reported_prompt_tokens", flat=True)
    )


def test_a_summary_its_model_cannot_hold_is_refused_unsent_and_not_tried_again(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    notes()
    tool_heavy_script(fake_provider)
    summarizer = summary_model_on(summary_fake, TrustZone.LOCAL, context_window=1000)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert summary_fake.requests == []
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert steps_of(run)[5:] == [
        (5, "compaction", "refused"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    step = AgentStep.objects.get(run=run, index=5)
    assert (step.error_code, step.cost) == ("context_overflow", None)
    assert step.breakdown["estimated"] > step.breakdown["budget"]
    note = "Compaction: a summary by gpt-4o-mini was refused (context_overflow); the oldest turns are dropped instead."
    assert [b["messages"][-1]["content"].split("\n")[1] for b in fake_provider.bodies()[5:]] == [note, note]


def test_a_summary_is_charged_to_the_clients_budget_like_every_send(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    notes()
    tool_heavy_script(fake_provider)
    summary_fake.script(Reply(text=SUMMARY))
    summarizer = summary_model_on(summary_fake, TrustZone.LOCAL)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    client = api_client_create(
        name="notes-bot", scopes=["runs:create"], configurations=[configuration], trust_zone=TrustZone.LOCAL
    ).client
    run = run_to_end(django_capture_on_commit_callbacks, configuration, api_client=client)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    steps = AgentStep.objects.filter(run=run).exclude(reported_prompt_tokens=None)
    assert [s.kind for s in steps.order_by("index")].count("compaction") == 1
    day = ClientDailyUsage.objects.get(client=client)
    tokens = sum(s.reported_prompt_tokens + s.completion_tokens for s in steps)
    assert (day.tokens_used, day.tokens_reserved) == (tokens, 0)
    assert (day.cost_used, day.cost_reserved) == (run.cost_total, 0)
