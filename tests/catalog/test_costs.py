"""What calls cost: each part of the usage at its price, the serving model's prices, the run's total."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from agents.models import AgentStep
from catalog.models import ConfigurationFallback, ProviderKind
from catalog.pricing import Prices, catalogue_prices, estimate_cost, usage_cost
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import model_make, provider_make
from tests.fakes.provider_server import FakeProvider, Reply, server_error

SONNET = Prices(
    input=Decimal("3"), cached_input=Decimal("0.30"), cache_write=Decimal("3.75"), output=Decimal("15")
)


def test_each_part_of_the_prompt_is_priced_at_its_own_price():
    cost = usage_cost(
        SONNET, prompt_tokens=10_000, cached_tokens=6_000, cache_write_tokens=3_000, completion_tokens=500
    )
    # 1,000 uncached x 3 + 6,000 read x 0.30 + 3,000 written x 3.75 + 500 out x 15, per million.
    assert cost == Decimal("0.02355")
    assert str(cost) == "0.02355"


def test_undeclared_cache_prices_are_the_input_price():
    class Row:
        input_price_per_million = Decimal("2.5")
        cached_input_price_per_million = None
        cache_write_price_per_million = None
        output_price_per_million = Decimal("10")

    prices = Prices.of(Row())
    assert prices == Prices(Decimal("2.5"), Decimal("2.5"), Decimal("2.5"), Decimal("10"))
    assert usage_cost(
        prices, prompt_tokens=1_000, cached_tokens=400, cache_write_tokens=100, completion_tokens=0
    ) == Decimal("0.0025")


def test_a_usage_nobody_reported_has_no_cost_and_a_missing_figure_counts_as_zero():
    none = {
        "prompt_tokens": None,
        "cached_tokens": None,
        "cache_write_tokens": None,
        "completion_tokens": None,
    }
    assert usage_cost(SONNET, **none) is None
    assert usage_cost(SONNET, **{**none, "completion_tokens": 2}) == Decimal("0.00003")
    assert usage_cost(SONNET, **{**none, "prompt_tokens": 7}) == Decimal("0.000021")


def test_parts_larger_than_the_prompt_never_make_a_negative_remainder():
    cost = usage_cost(SONNET, prompt_tokens=10, cached_tokens=20, cache_write_tokens=0, completion_tokens=0)
    assert cost == Decimal("0.000006")  # 20 reads x 0.30, and no uncached tokens


def test_the_estimate_prices_the_prompt_at_the_dearer_of_input_and_cache_write_and_the_whole_reply():
    assert estimate_cost(SONNET, prompt_tokens=1_000, max_output_tokens=2_000) == Decimal("0.03375")


def test_shipped_prices_resolve_aliases_and_snapshots_and_leave_unknown_models_unpriced():
    sonnet = catalogue_prices("claude-sonnet-4-5")
    assert sonnet is not None and sonnet.as_fields() == {
        "input_price_per_million": Decimal("3.00"),
        "cached_input_price_per_million": Decimal("0.30"),
        "cache_write_price_per_million": Decimal("3.75"),
        "output_price_per_million": Decimal("15.00"),
    }
    mini = catalogue_prices("gpt-4o-mini-2024-07-18")
    assert mini is not None and mini.cached_input_price_per_million == Decimal("0.075")
    assert catalogue_prices("llama-3.1-8b-instruct") is None
    assert catalogue_prices("gpt-4o-evil") is None


@pytest.fixture
def second_fake():
    with FakeProvider() as fake:
        yield fake


@pytest.mark.django_db
def test_a_step_served_by_a_fallback_costs_the_fallbacks_prices_and_the_run_totals_its_steps(
    fake_provider, second_fake, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(
        fake_provider,
        model_input_price_per_million=Decimal("100"),
        model_output_price_per_million=Decimal("100"),
    )
    fallback_provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE, base_url=second_fake.openai_base_url, max_retries=0
    )
    fallback = model_make(
        provider=fallback_provider,
        model_id="gpt-4o-mini",
        input_price_per_million=Decimal("0.15"),
        cached_input_price_per_million=Decimal("0.075"),
        output_price_per_million=Decimal("0.60"),
    )
    ConfigurationFallback.objects.create(configuration=configuration, model=fallback, position=0)
    tool_turn = replace(
        Reply.tools(("call-1", "snippets_by_tag", {"tag": "tone"})), prompt_tokens=40, completion_tokens=7
    )
    fake_provider.script(tool_turn, server_error())
    second_fake.script(Reply(text="Done.", prompt_tokens=1_000, cached_tokens=800, completion_tokens=10))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    steps = list(AgentStep.objects.filter(run=run).order_by("index"))
    # Step 0 on the primary: (40 x 100 + 7 x 100) per million. Step 1 on the fallback:
    # (200 x 0.15 + 800 x 0.075 + 10 x 0.60) per million.
    assert [step.cost for step in steps] == [Decimal("0.0047"), Decimal("0.000096")]
    assert run.cost_total == Decimal("0.004796")
