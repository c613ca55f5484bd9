"""Compaction end to end against the loopback fake provider: a long tool-heavy run in a small window,
on each strategy, with exact assertions on what reached the wire (the summary model has a fake of its
own, so what it was sent is seen apart from the run's model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest

from agents.apis.run_events import run_event_stream
from agents.apis.run_output import run_detail_body
from agents.models import AgentRun, AgentStep, Configuration, LlmModel, ProviderKind
from agents.runtime.compacted import cleared_stub, summary_message
from agents.runtime.step import step_run
from agents.runtime.summary import SUMMARY_INSTRUCTIONS
from agents.runtime.transcript import run_context
from context_assembly.encodings import get_encoding
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import model_make, provider_make, snippet_make
from tests.fakes.provider_server import ENCODING, FakeProvider, Reply, count_prompt_tokens

pytestmark = pytest.mark.django_db

WORDS = ("amber", "basalt", "cedar", "delta", "ember", "fjord", "granite", "harbour", "iris", "juniper")
CALLS = 6
SUMMARY = "Notes 0 to 2 were read: amber, basalt and cedar lists."
SECRET_SUMMARY = "Notes 0 to 2 were read; notes 1 are restricted."
# 2,000-token window, 200 reserved for the reply, 3% margin: a budget of 1,740 the six results exceed.
SMALL_WINDOW = {"model_context_window": 2000, "model_max_output_tokens": 200}


@pytest.fixture
def summary_fake() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


def notes(*, secret: int | None = None) -> list[str]:
    """Six snippets of about 270 tokens, one per tag ``t0``..``t5``; the tool's result text of each."""
    results = []
    for i in range(CALLS):
        text = " ".join(f"{WORDS[(i + j) % len(WORDS)]}{j}" for j in range(120))
        fields = {}
        if i == secret:
            fields = {"data_class": DataClass.SECRET_ADJACENT, "ceiling": TrustZone.LOCAL}
        snippet_make(identifier=f"notes-{i}", name=f"Notes {i}", text=text, tags=(f"t{i}",), **fields)
        results.append(f"Notes {i}:\n{text}")
    return results


def tool_heavy_script(fake: FakeProvider) -> None:
    fake.script(
        *[Reply.tools((f"call_{i}", "snippets_by_tag", {"tags": [f"t{i}"]})) for i in range(CALLS)],
        Reply(text="All notes read."),
    )


def compacting_configuration(fake: FakeProvider, strategy: str, **fields: object) -> Configuration:
    settings = {"compaction_threshold": 0.5, "compaction_keep": 2, **fields}
    return fake_configuration(
        fake,
        max_iterations=20,
        context_strategy=strategy,
        context_usage_note="tail",
        **SMALL_WINDOW,
        **settings,
    )


def summary_model_on(fake: FakeProvider, zone: str, context_window: int = 8000) -> LlmModel:
    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake.openai_base_url,
        trust_zone=zone,
        timeout_seconds=5,
        max_retries=0,
    )
    return model_make(
        provider=provider,
        model_id="gpt-4o-mini",
        context_window=context_window,
        max_output_tokens=500,
        input_price_per_million=Decimal("2.00"),
        output_price_per_million=Decimal("8.00"),
    )


def _steps(run: AgentRun) -> list[tuple[int, str, str]]:
    return list(AgentStep.objects.filter(run=run).order_by("index").values_list("index", "kind", "status"))


def _tokens(text: str) -> int:
    return len(get_encoding(ENCODING).encode(text))


def _wire(body: dict) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get("content")) for m in body["messages"]]


def _call(i: int) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": "snippets_by_tag",
                    "arguments": json.dumps({"tags": [f"t{i}"]}, separators=(",", ":")),
                },
            }
        ],
    }


def _result(i: int, content: str) -> dict:
    return {"role": "tool", "content": content, "tool_call_id": f"call_{i}"}


def _prompts(run: AgentRun) -> dict[int, int]:
    steps = AgentStep.objects.filter(run=run, kind="model_call").order_by("index")
    return dict(steps.values_list("index", "reported_prompt_tokens"))


def test_drop_oldest_drops_turns_on_this_task(fake_provider, django_capture_on_commit_callbacks):
    """The control: the same task on today's strategy loses whole turns from the step's context."""
    notes()
    tool_heavy_script(fake_provider)
    run = run_to_end(
        django_capture_on_commit_callbacks, compacting_configuration(fake_provider, "drop_oldest")
    )
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert {kind for _, kind, _ in _steps(run)} == {"model_call"}
    dropped = list(
        AgentStep.objects.filter(run=run).order_by("index").values_list("breakdown__dropped_turns")
    )
    assert [d for (d,) in dropped] == [0, 0, 0, 0, 0, 0, 1]
    assert fake_provider.bodies()[6]["messages"][2] == _call(1)


def test_clear_tool_results_compacts_instead_of_dropping_turns(
    fake_provider, django_capture_on_commit_callbacks
):
    results = notes()
    tool_heavy_script(fake_provider)
    run = run_to_end(
        django_capture_on_commit_callbacks, compacting_configuration(fake_provider, "clear_tool_results")
    )

    assert (run.status, run.termination_reason) == ("completed", "completed")
    # Step 4's prompt passed half the window, so index 5 compacts and the model call moves to 6.
    assert _steps(run) == [
        *[(i, "model_call", "completed") for i in range(5)],
        (5, "compaction", "completed"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    step = AgentStep.objects.get(run=run, index=5)
    cleared = [
        {"position": 2 * i + 1, "tool": "snippets_by_tag", "tokens": _tokens(results[i])} for i in range(3)
    ]
    assert step.compaction == {
        "strategy": "clear_tool_results",
        "cleared": cleared,
        "tokens": sum(item["tokens"] for item in cleared),
    }
    assert (step.model, step.cost, step.usage_provenance) == (None, None, "unavailable")
    bodies = fake_provider.bodies()
    assert len(bodies) == 7  # no call for the compaction
    after = bodies[5]["messages"]  # the model call at index 6
    stub = [cleared_stub("snippets_by_tag", item["tokens"]) for item in cleared]
    assert after[2:-1] == [
        _call(0), _result(0, stub[0]),
        _call(1), _result(1, stub[1]),
        _call(2), _result(2, stub[2]),
        _call(3), _result(3, results[3]),
        _call(4), _result(4, results[4]),
    ]  # fmt: skip
    prompts = _prompts(run)
    assert after[-1] == {
        "role": "user",
        "content": f"Context usage: {prompts[4]:,} of 2,000 tokens used by the last step (provider_reported).\n"
        f"Compacted: 3 older tool results cleared ({step.compaction['tokens']:,} tokens).",
    }
    assert prompts[6] < prompts[4]  # the context use drops on the next step
    assert prompts == {i: count_prompt_tokens(b) for i, b in zip((0, 1, 2, 3, 4, 6, 7), bodies, strict=True)}
    breakdowns = AgentStep.objects.filter(run=run, kind="model_call").values_list("breakdown", flat=True)
    assert [b["dropped_turns"] for b in breakdowns] == [0] * 7
    assert run_context(run).context_usage.used_tokens.value == prompts[7]


def test_summarise_replaces_older_turns_with_a_governed_summary(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    results = notes()
    tool_heavy_script(fake_provider)
    summary_fake.script(Reply(text=SUMMARY))
    summarizer = summary_model_on(summary_fake, TrustZone.LOCAL)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert _steps(run)[5:] == [
        (5, "compaction", "completed"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    # The summary's own send: the instructions, then the task and the three older turns as text.
    (sent,) = summary_fake.bodies()
    turns = "\n\n".join(
        f'[assistant calls snippets_by_tag as call_{i}]\n{{"tags":["t{i}"]}}\n\n[tool result call_{i}]\n'
        f"{results[i]}"
        for i in range(3)
    )
    assert _wire(sent) == [
        ("system", SUMMARY_INSTRUCTIONS),
        (
            "user",
            f"The agent's task:\nSummarise our tone of voice.\n\nThe conversation to summarise:\n\n{turns}",
        ),
    ]
    assert "tools" not in sent
    step = AgentStep.objects.get(run=run, index=5)
    assert step.compaction == {
        "strategy": "summarise",
        "through": 6,
        "messages": 6,
        "summary": SUMMARY,
        "observed": False,
    }
    assert (step.model_id, step.label, step.receiver_label) == (
        summarizer.pk,
        "editor_content",
        "editor_content",
    )
    # Usage and cost of the compaction step, at the summary model's prices, and in the run's totals.
    prompt, completion = count_prompt_tokens(sent), _tokens(SUMMARY)
    assert (step.reported_prompt_tokens, step.completion_tokens) == (prompt, completion)
    assert step.cost == (Decimal(prompt) * 2 + Decimal(completion) * 8) / 1_000_000
    model_steps = AgentStep.objects.filter(run=run, kind="model_call")
    assert run.prompt_tokens_total == prompt + sum(s.reported_prompt_tokens for s in model_steps)
    assert run.cost_total == step.cost + sum(s.cost for s in model_steps)
    # The next model call: the summary in place of the six older messages, then the kept turns.
    after = fake_provider.bodies()[5]["messages"]
    prompts = _prompts(run)
    assert after[2:-1] == [
        {"role": "assistant", "content": summary_message(6, SUMMARY).content},
        _call(3), _result(3, results[3]),
        _call(4), _result(4, results[4]),
    ]  # fmt: skip
    assert after[-1]["content"] == (
        f"Context usage: {prompts[4]:,} of 2,000 tokens used by the last step (provider_reported).\n"
        f"Compacted: this run's first 6 messages are replaced by a summary written by gpt-4o-mini."
    )
    assert prompts[6] < prompts[4]
    breakdowns = model_steps.values_list("breakdown", flat=True)
    assert [b["dropped_turns"] for b in breakdowns] == [0] * 7


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
    assert _steps(run)[5:] == [
        (5, "compaction", "refused"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    assert AgentStep.objects.get(run=run, index=7).breakdown["dropped_turns"] == 1


def _step_events(run: AgentRun, zone: TrustZone) -> dict[int, dict]:
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
        event = _step_events(run, zone)[5]["compaction"]
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
    assert _steps(run)[5:] == [
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


def test_a_redelivered_compaction_index_does_nothing(fake_provider, django_capture_on_commit_callbacks):
    notes()
    tool_heavy_script(fake_provider)
    run = run_to_end(
        django_capture_on_commit_callbacks, compacting_configuration(fake_provider, "clear_tool_results")
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        outcome = step_run(run_id=str(run.id), step_index=5, worker="late-worker")
    assert (outcome.action, callbacks) == ("skipped", [])
    assert AgentStep.objects.filter(run=run, kind="compaction").count() == 1
    assert len(fake_provider.requests) == 7


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
    assert _steps(run)[5:] == [
        (5, "compaction", "refused"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    step = AgentStep.objects.get(run=run, index=5)
    assert (step.error_code, step.cost) == ("context_overflow", None)
    assert step.breakdown["estimated"] > step.breakdown["budget"]
    note = "Compaction: a summary by gpt-4o-mini was refused (context_overflow); the oldest turns are dropped instead."
    assert [b["messages"][-1]["content"].split("\n")[1] for b in fake_provider.bodies()[5:]] == [note, note]


def test_compaction_comes_before_a_step_would_drop_turns_below_the_threshold(
    fake_provider, django_capture_on_commit_callbacks
):
    results = notes()
    tool_heavy_script(fake_provider)
    configuration = compacting_configuration(fake_provider, "clear_tool_results", compaction_threshold=1.0)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    # Index 6 is where drop_oldest drops a turn (the control above): it compacts instead.
    assert _steps(run)[5:] == [
        (5, "model_call", "completed"),
        (6, "compaction", "completed"),
        (7, "model_call", "completed"),
    ]
    cleared = AgentStep.objects.get(run=run, index=6).compaction["cleared"]
    assert [item["position"] for item in cleared] == [1, 3, 5, 7]
    after = fake_provider.bodies()[6]["messages"]
    assert after[-3:-1] == [_call(5), _result(5, results[5])]
    assert AgentStep.objects.get(run=run, index=7).breakdown["dropped_turns"] == 0


def test_a_run_started_with_a_conversation_compacts_its_own_turns_and_summaries_chain(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    results = notes()
    tool_heavy_script(fake_provider)
    later = "Notes 0 to 3 were read."
    summary_fake.script(Reply(text=SUMMARY), Reply(text=later))
    summarizer = summary_model_on(summary_fake, TrustZone.LOCAL)
    configuration = compacting_configuration(fake_provider, "summarise", summary_model=summarizer)
    conversation = [
        {"role": "user", "content": "Summarise our tone of voice."},
        {"role": "assistant", "content": "Which notes?"},
        {"role": "user", "content": "All of them."},
    ]
    run = run_to_end(django_capture_on_commit_callbacks, configuration, messages=conversation)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    # The caller's turns fill the window sooner: two compactions, the second summarising the first.
    kinds = [kind for _, kind, _ in _steps(run)]
    assert [i for i, kind in enumerate(kinds) if kind == "compaction"] == [4, 7]
    records = AgentStep.objects.filter(run=run, kind="compaction").order_by("index")
    assert [(r.compaction["through"], r.compaction["summary"]) for r in records] == [(4, SUMMARY), (8, later)]
    first, second = summary_fake.bodies()
    assert "Which notes?" not in first["messages"][1]["content"]  # the caller's turns are not summarised
    assert f"[assistant]\n{summary_message(4, SUMMARY).content}" in second["messages"][1]["content"]
    last = fake_provider.bodies()[-1]["messages"]  # the model call at index 8
    assert last[2:-1] == [
        {"role": "assistant", "content": "Which notes?"},
        {"role": "user", "content": "All of them."},
        {"role": "assistant", "content": summary_message(8, later).content},
        _call(4), _result(4, results[4]),
        _call(5), _result(5, results[5]),
    ]  # fmt: skip
    positions = list(run.messages.order_by("position").values_list("position", flat=True))
    assert positions == list(range(2 * CALLS + 1))
