"""Compaction end to end against the loopback fake provider: a long tool-heavy run in a small window,
on each strategy, compacts instead of dropping turns, with exact assertions on what reached the wire."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from agents.models import AgentStep
from agents.runtime.compacted import cleared_stub, summary_message
from agents.runtime.step import step_run
from agents.runtime.summary import SUMMARY_INSTRUCTIONS
from agents.runtime.transcript import run_context
from catalog.models import ProviderKind
from governance.vocabulary import TrustZone
from tests.agents.compaction_runs import (
    CALLS,
    SUMMARY,
    call,
    compacting_configuration,
    notes,
    prompts_of,
    result,
    steps_of,
    summary_model_on,
    tokens,
    tool_heavy_script,
    wire,
)
from tests.agents.runs import run_to_end
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import FakeProvider, Reply, count_prompt_tokens

pytestmark = pytest.mark.django_db


@pytest.fixture
def summary_fake() -> Iterator[FakeProvider]:
    """The summary model's own provider, so what it was sent is seen apart from the run's model."""
    with FakeProvider() as fake:
        yield fake


def test_drop_oldest_drops_turns_on_this_task(fake_provider, django_capture_on_commit_callbacks):
    """The control: the same task on today's strategy loses whole turns from the step's context."""
    notes()
    tool_heavy_script(fake_provider)
    run = run_to_end(
        django_capture_on_commit_callbacks, compacting_configuration(fake_provider, "drop_oldest")
    )
    assert (run.status, run.termination_reason) == ("completed", "completed")
    assert {kind for _, kind, _ in steps_of(run)} == {"model_call"}
    dropped = list(
        AgentStep.objects.filter(run=run).order_by("index").values_list("breakdown__dropped_turns")
    )
    assert [d for (d,) in dropped] == [0, 0, 0, 0, 0, 0, 1]
    assert fake_provider.bodies()[6]["messages"][2] == call(1)


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
    assert steps_of(run) == [
        *[(i, "model_call", "completed") for i in range(5)],
        (5, "compaction", "completed"),
        (6, "model_call", "completed"),
        (7, "model_call", "completed"),
    ]
    step = AgentStep.objects.get(run=run, index=5)
    cleared = [
        {"position": 2 * i + 1, "tool": "snippets_by_tag", "tokens": tokens(results[i])} for i in range(3)
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
        call(0), result(0, stub[0]),
        call(1), result(1, stub[1]),
        call(2), result(2, stub[2]),
        call(3), result(3, results[3]),
        call(4), result(4, results[4]),
    ]  # fmt: skip
    prompts = prompts_of(run)
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
    assert steps_of(run)[5:] == [
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
    assert wire(sent) == [
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
    prompt, completion = count_prompt_tokens(sent), tokens(SUMMARY)
    assert (step.reported_prompt_tokens, step.completion_tokens) == (prompt, completion)
    assert step.cost == (Decimal(prompt) * 2 + Decimal(completion) * 8) / 1_000_000
    model_steps = AgentStep.objects.filter(run=run, kind="model_call")
    assert run.prompt_tokens_total == prompt + sum(s.reported_prompt_tokens for s in model_steps)
    assert run.cost_total == step.cost + sum(s.cost for s in model_steps)
    # The next model call: the summary in place of the six older messages, then the kept turns.
    after = fake_provider.bodies()[5]["messages"]
    prompts = prompts_of(run)
    assert after[2:-1] == [
        {"role": "assistant", "content": summary_message(6, SUMMARY).content},
        call(3), result(3, results[3]),
        call(4), result(4, results[4]),
    ]  # fmt: skip
    assert after[-1]["content"] == (
        f"Context usage: {prompts[4]:,} of 2,000 tokens used by the last step (provider_reported).\n"
        f"Compacted: this run's first 6 messages are replaced by a summary written by gpt-4o-mini."
    )
    assert prompts[6] < prompts[4]
    breakdowns = model_steps.values_list("breakdown", flat=True)
    assert [b["dropped_turns"] for b in breakdowns] == [0] * 7


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


def test_compaction_comes_before_a_step_would_drop_turns_below_the_threshold(
    fake_provider, django_capture_on_commit_callbacks
):
    results = notes()
    tool_heavy_script(fake_provider)
    configuration = compacting_configuration(fake_provider, "clear_tool_results", compaction_threshold=1.0)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    # Index 6 is where drop_oldest drops a turn (the control above): it compacts instead.
    assert steps_of(run)[5:] == [
        (5, "model_call", "completed"),
        (6, "compaction", "completed"),
        (7, "model_call", "completed"),
    ]
    cleared = AgentStep.objects.get(run=run, index=6).compaction["cleared"]
    assert [item["position"] for item in cleared] == [1, 3, 5, 7]
    after = fake_provider.bodies()[6]["messages"]
    assert after[-3:-1] == [call(5), result(5, results[5])]
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
    kinds = [kind for _, kind, _ in steps_of(run)]
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
        call(4), result(4, results[4]),
        call(5), result(5, results[5]),
    ]  # fmt: skip
    positions = list(run.messages.order_by("position").values_list("position", flat=True))
    assert positions == list(range(2 * CALLS + 1))


def test_on_the_anthropic_wire_the_summary_opens_the_assistant_turn_it_precedes(
    fake_provider, summary_fake, django_capture_on_commit_callbacks
):
    notes()
    tool_heavy_script(fake_provider)
    summary_fake.script(Reply(text=SUMMARY), Reply(text="Notes 0 to 3 were read."))
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC,
        base_url=fake_provider.anthropic_base_url,
        trust_zone=TrustZone.LOCAL,
        timeout_seconds=5,
        max_retries=0,
    )
    model = model_make(
        provider=provider,
        model_id="claude-sonnet-4-20250514",
        tokenizer="approximate",
        context_window=2000,
        max_output_tokens=200,
    )
    configuration = configuration_make(
        model=model,
        allowed_tool_groups=["content"],
        max_iterations=20,
        context_strategy="summarise",
        compaction_threshold=0.5,
        compaction_keep=2,
        summary_model=summary_model_on(summary_fake, TrustZone.LOCAL),
    )
    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    first = AgentStep.objects.filter(run=run, kind="compaction").order_by("index").first()
    through = first.compaction["through"]
    kept = through // 2  # the first call the summary did not replace
    after = fake_provider.bodies()[first.index]["messages"]  # the model call right after it
    assert after[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": summary_message(through, SUMMARY).content},
            {
                "type": "tool_use",
                "id": f"call_{kept}",
                "name": "snippets_by_tag",
                "input": {"tags": [f"t{kept}"]},
            },
        ],
    }
