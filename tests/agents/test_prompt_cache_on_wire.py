"""Prompt caching on the recorded wire: every step's request repeats the previous one and adds the new
messages (the tail note and Anthropic's moving breakpoint excepted), and Anthropic requests carry
``cache_control`` breakpoints on the stable prefix and the newest turn."""

from __future__ import annotations

import copy
import itertools
import json
import re
from typing import Any

import pytest

from agents.models import AgentStep
from catalog.models import ProviderKind
from governance.vocabulary import TrustZone
from skills.composition import END_MARKER, GUARD_PREAMBLE
from snippets.models import Snippet
from tests.agents.runs import run_to_end
from tests.factories import (
    configuration_make,
    configuration_skills_set,
    model_make,
    provider_make,
    skill_make,
    snippet_make,
)
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = pytest.mark.django_db

MARK = {"type": "ephemeral"}
LONG_PROMPT = "You help editors keep the house style: short sentences, plain words, no jargon. " * 90
INPUT = "Draft the weekly note."


@pytest.fixture
def caching_fake():
    with FakeProvider(prompt_cache=True) as fake:
        yield fake


def configured(fake: FakeProvider, tmp_path, wire: str, *, system_prompt: str = LONG_PROMPT, **model_fields):
    anthropic = wire == "anthropic"
    provider = provider_make(
        kind=ProviderKind.ANTHROPIC if anthropic else ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake.anthropic_base_url if anthropic else fake.openai_base_url,
        trust_zone=TrustZone.LOCAL,
        timeout_seconds=5,
        max_retries=0,
    )
    model_fields.setdefault("model_id", "claude-sonnet-4-20250514" if anthropic else "gpt-4o")
    model_fields.setdefault("tokenizer", "approximate" if anthropic else "o200k_base")
    model = model_make(provider=provider, **model_fields)
    if not Snippet.objects.filter(identifier="tone").exists():
        snippet_make(identifier="tone", name="Tone", text="Warm and brief. " * 40, tags=("tone",))
    configuration = configuration_make(
        model=model,
        system_prompt=system_prompt,
        snippet_tags=["tone"],
        allowed_tool_groups=["content"],
        context_usage_note="tail",
    )
    skill = skill_make(tmp_path, name="house-style", body="Use the active voice.\n" * 200)
    configuration_skills_set(configuration, [skill])
    return configuration


def three_steps(fake: FakeProvider) -> None:
    fake.script(
        Reply.tools(("call_1", "snippets_by_tag", {"tags": ["tone"]})),
        Reply.tools(("call_2", "snippets_by_tag", {"tags": ["tone"]})),
        Reply(text="Done."),
    )


def without_volatile_parts(body: dict[str, Any], wire: str) -> dict[str, Any]:
    """``body`` without its tail note and, on Anthropic, without its newest-turn breakpoint (the one
    marker that moves to the new newest turn at the next step)."""
    body = copy.deepcopy(body)
    messages = body["messages"]
    if wire == "openai":
        assert messages.pop()["content"].startswith("Context usage:")
        return body
    last = messages[-1]["content"]
    assert last.pop()["text"].startswith("Context usage:")  # merged into the last user message
    if not last:
        messages.pop()
    if len(messages) > 1 or len(messages[0]["content"]) > 2:  # a transcript: its end carries a breakpoint
        assert messages[-1]["content"][-1].pop("cache_control") == MARK
    return body


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # key order kept: the same text the client sent


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_each_steps_request_is_the_previous_request_plus_the_new_messages(
    fake_provider, tmp_path, django_capture_on_commit_callbacks, wire
):
    configuration = configured(fake_provider, tmp_path, wire)
    three_steps(fake_provider)
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)
    assert run.status == "completed"
    bodies = [without_volatile_parts(body, wire) for body in fake_provider.bodies()]
    assert len(bodies) == 3
    for previous, current in itertools.pairwise(bodies):
        assert list(current) == list(previous)
        assert as_json({**current, "messages": None}) == as_json({**previous, "messages": None})
        kept = current["messages"][: len(previous["messages"])]
        assert [as_json(m) for m in kept] == [as_json(m) for m in previous["messages"]]
        assert len(current["messages"]) == len(previous["messages"]) + 2  # the reply and its tool result


def marks(body: dict[str, Any]) -> list[str]:
    """Where ``body``'s breakpoints are: "system", or "messages[i].content[j]"."""
    found = []
    system = body.get("system")
    if isinstance(system, list):
        found += ["system" for block in system if "cache_control" in block]
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append(f"messages[{i}].content[{j}]")
    for tool in body.get("tools", []):
        assert "cache_control" not in tool
    return found


def test_anthropic_breakpoints_close_the_system_block_the_skill_block_and_the_newest_turn(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    configuration = configured(fake_provider, tmp_path, "anthropic")
    three_steps(fake_provider)
    run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)
    first, second, third = fake_provider.bodies()
    # Step 1 has no transcript: only the prefix every run of the configuration shares is marked.
    assert marks(first) == ["system", "messages[0].content[0]"]
    assert first["system"][0]["text"].startswith(LONG_PROMPT.strip())
    skill_block, rest, tail = first["messages"][0]["content"]
    assert skill_block["text"].startswith(GUARD_PREAMBLE) and skill_block["text"].endswith(END_MARKER)
    assert rest["text"] == f"\n\n{INPUT}"
    assert tail["text"].startswith("Context usage:") and "cache_control" not in tail
    # Later steps also mark the newest turn: the last tool result, before the tail note.
    assert marks(second) == ["system", "messages[0].content[0]", "messages[2].content[0]"]
    assert second["messages"][2]["content"][0]["type"] == "tool_result"
    assert marks(third) == ["system", "messages[0].content[0]", "messages[4].content[0]"]
    assert third["messages"][4]["content"][0]["tool_use_id"] == "call_2"


def test_no_breakpoint_closes_a_prefix_shorter_than_the_models_minimum(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    # About 2,000 tokens of system prompt: enough for Sonnet 4 (1,024), not for Haiku 4.5 (4,096).
    prompt = LONG_PROMPT[: len(LONG_PROMPT) // 2]
    sonnet = configured(fake_provider, tmp_path / "s", "anthropic", system_prompt=prompt)
    haiku = configured(
        fake_provider, tmp_path / "h", "anthropic", system_prompt=prompt, model_id="claude-haiku-4-5"
    )
    fake_provider.script(Reply(text="one"), Reply(text="two"))
    run_to_end(django_capture_on_commit_callbacks, sonnet, input_text=INPUT)
    run_to_end(django_capture_on_commit_callbacks, haiku, input_text=INPUT)
    on_sonnet, on_haiku = fake_provider.bodies()
    assert marks(on_sonnet) == ["system", "messages[0].content[0]"]
    assert marks(on_haiku) == []
    assert on_haiku["system"] == on_sonnet["system"][0]["text"]  # a plain string, as without caching


def test_a_models_declared_minimum_wins_over_the_catalogues(
    fake_provider, tmp_path, django_capture_on_commit_callbacks
):
    configuration = configured(fake_provider, tmp_path, "anthropic", prompt_cache_min_tokens=200_000)
    fake_provider.script(Reply(text="one"))
    run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)
    assert marks(fake_provider.bodies()[0]) == []


def test_cache_reads_and_writes_are_recorded_per_step_and_in_the_runs_totals(
    caching_fake, tmp_path, django_capture_on_commit_callbacks
):
    configuration = configured(caching_fake, tmp_path, "anthropic")
    three_steps(caching_fake)
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)
    steps = list(AgentStep.objects.filter(run=run).order_by("index"))
    reads = [step.cached_tokens for step in steps]
    writes = [step.cache_write_tokens for step in steps]
    assert reads[0] == 0 and writes[0] > 0
    # Step 2 reads what step 1 wrote (system and skill block) and writes its own newest turn.
    assert reads[1] == writes[0] and writes[1] > 0
    assert reads[2] == reads[1] + writes[1]
    for step in steps:
        assert step.reported_prompt_tokens > step.cached_tokens + step.cache_write_tokens
    run.refresh_from_db()
    assert (run.cached_tokens_total, run.cache_write_tokens_total) == (sum(reads), sum(writes))


def test_admin_shows_cache_reads_and_writes_of_each_step_and_the_run(
    caching_fake, tmp_path, django_capture_on_commit_callbacks, admin_client
):
    configuration = configured(caching_fake, tmp_path, "anthropic")
    three_steps(caching_fake)
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)
    second = AgentStep.objects.get(run=run, index=1)
    step_page = admin_client.get(f"/admin/agents/agentstep/{second.pk}/change/").content.decode()
    assert "Cache write tokens" in step_page
    assert f'<div class="readonly">{second.cache_write_tokens}</div>' in step_page
    assert f'<div class="readonly">{second.cached_tokens}</div>' in step_page
    run.refresh_from_db()
    run_page = admin_client.get(f"/admin/agents/agentrun/{run.pk}/change/").content.decode()
    assert "Cache write tokens total" in run_page
    assert f'<div class="readonly">{run.cache_write_tokens_total}</div>' in run_page
    inline = re.findall(r'<td class="field-cache">\s*<p>([\d,]+) read<br>([\d,]+) written</p>', run_page)
    steps = AgentStep.objects.filter(run=run).order_by("index")
    assert inline == [(f"{step.cached_tokens or 0:,}", f"{step.cache_write_tokens or 0:,}") for step in steps]
