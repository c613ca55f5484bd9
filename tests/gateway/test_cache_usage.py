"""Prompt-cache reads and writes in the API: per step and in a run's totals, and in a completion."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.models import AgentRun
from gateway.models import CompletionRecord
from tests.agents.test_prompt_cache_on_wire import INPUT, configured, three_steps
from tests.fakes.provider_server import FakeProvider, Reply

pytestmark = pytest.mark.django_db

# Anthropic's list prices for Claude Sonnet 4 (catalog/pricing.py), per million tokens.
SONNET_PRICES = {
    "input_price_per_million": Decimal("3.00"),
    "cached_input_price_per_million": Decimal("0.30"),
    "cache_write_price_per_million": Decimal("3.75"),
    "output_price_per_million": Decimal("15.00"),
}


def sonnet_cost(usage: dict) -> Decimal:
    """Each part of the reported usage at its price: uncached prompt, cache reads, cache writes, output."""
    read, written = usage["cached_tokens"], usage["cache_write_tokens"]
    uncached = usage.get("prompt_tokens", usage.get("reported_prompt_tokens")) - read - written
    per_million = (
        uncached * Decimal("3.00")
        + read * Decimal("0.30")
        + written * Decimal("3.75")
        + usage["completion_tokens"] * Decimal("15.00")
    )
    return per_million / 1_000_000


@pytest.fixture
def caching_fake():
    with FakeProvider(prompt_cache=True) as fake:
        yield fake


def test_run_detail_shows_cache_reads_and_writes_per_step_and_in_total(
    caching_fake, make_caller, tmp_path, django_capture_on_commit_callbacks
):
    configuration = configured(caching_fake, tmp_path, "anthropic", **SONNET_PRICES)
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    three_steps(caching_fake)
    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post("/api/v1/runs", {"configuration": configuration.identifier, "input": INPUT})
    detail = caller.get(response["Location"]).json()
    assert detail["status"] == "completed"
    usages = [step["usage"] for step in detail["steps"]]
    reads = [usage["cached_tokens"] for usage in usages]
    writes = [usage["cache_write_tokens"] for usage in usages]
    assert reads[0] == 0 and all(writes)
    assert reads[1] == writes[0] and reads[2] == reads[1] + writes[1]
    run = AgentRun.objects.get()
    costs = [sonnet_cost(usage) for usage in usages]
    assert [usage["cost"] for usage in usages] == [f"{cost:.10f}" for cost in costs]
    assert detail["totals"] == {
        "prompt_tokens": run.prompt_tokens_total,
        "cached_tokens": sum(reads),
        "cache_write_tokens": sum(writes),
        "completion_tokens": run.completion_tokens_total,
        "cost": f"{sum(costs):.10f}",
    }
    assert run.cost_total == sum(costs)


def test_a_completion_reports_its_cache_writes_and_the_next_one_its_reads(
    caching_fake, make_caller, tmp_path
):
    configuration = configured(caching_fake, tmp_path, "anthropic", **SONNET_PRICES)
    caller = make_caller("configurations:use", configurations=(configuration,))
    caching_fake.script(Reply(text="First."), Reply(text="Second."))
    request = {"configuration": configuration.identifier, "input": INPUT}
    first = caller.post("/api/v1/completions", request).json()["usage"]
    second = caller.post("/api/v1/completions", {**request, "input": "Another task."}).json()["usage"]
    # The shared prefix (tools, system block, skill block) is written once, then read.
    assert (first["cached_tokens"], second["cache_write_tokens"]) == (0, 0)
    assert first["cache_write_tokens"] == second["cached_tokens"] > 0
    # The write is charged at the write premium, the read at the cached-input price.
    assert (first["cost"], second["cost"]) == (f"{sonnet_cost(first):.10f}", f"{sonnet_cost(second):.10f}")
    assert [record.cost for record in CompletionRecord.objects.order_by("created_at", "id")] == [
        sonnet_cost(first),
        sonnet_cost(second),
    ]
