"""What a call costs: a model's prices and the cost of a usage, in exact decimals.

Prices are per million tokens, in the currency the operator keeps them in (the shipped figures are
US dollars). A prompt is priced in three parts, from the normalised usage
(:class:`providers.values.Usage`, whose ``prompt_tokens`` includes cache reads and writes):

* cache reads (``cached_tokens``) at the cached-input price (empty on the model row: the input price);
* cache writes (``cache_write_tokens``, Anthropic's cache creation) at the cache-write price (empty:
  the input price; Anthropic charges 1.25 times the input price for a 5-minute write, which the
  shipped figures carry);
* the rest of the prompt at the input price;

and the completion at the output price. Nothing is rounded: a cost has at most ten decimal places
(four of the price, six of the division by a million), which :data:`COST_DECIMAL_PLACES` stores.

This module imports only the models' field values it is handed, so the runtime, the completions
service, the budgets and the reports all price the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from context_assembly.profiles import catalogue_get

MILLION = Decimal(1_000_000)
ZERO = Decimal(0)
# A cost's stored shape: up to 10 decimal places (price: 4, per-token division: 6) and 10 digits before.
COST_MAX_DIGITS, COST_DECIMAL_PLACES = 20, 10
COST_QUANTUM = Decimal(1).scaleb(-COST_DECIMAL_PLACES)


class PricedModel(Protocol):
    """The price fields of a model row (``agents.models.LlmModel``)."""

    input_price_per_million: Decimal
    cached_input_price_per_million: Decimal | None
    cache_write_price_per_million: Decimal | None
    output_price_per_million: Decimal


class ReportedUsage(Protocol):
    """What a provider reported a call used (``providers.values.Usage``, frozen)."""

    @property
    def prompt_tokens(self) -> int | None: ...
    @property
    def cached_tokens(self) -> int | None: ...
    @property
    def cache_write_tokens(self) -> int | None: ...
    @property
    def completion_tokens(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Prices:
    """Per million tokens. ``cached_input`` and ``cache_write`` are the input price when not declared."""

    input: Decimal
    cached_input: Decimal
    cache_write: Decimal
    output: Decimal

    @classmethod
    def of(cls, model: PricedModel) -> Prices:
        base = Decimal(model.input_price_per_million)
        cached, write = model.cached_input_price_per_million, model.cache_write_price_per_million
        return cls(
            input=base,
            cached_input=base if cached is None else Decimal(cached),
            cache_write=base if write is None else Decimal(write),
            output=Decimal(model.output_price_per_million),
        )


def usage_cost(
    prices: Prices,
    *,
    prompt_tokens: int | None,
    cached_tokens: int | None,
    cache_write_tokens: int | None,
    completion_tokens: int | None,
) -> Decimal | None:
    """The exact cost of one call's reported usage; None when neither the prompt nor the completion
    was reported (nothing to price: a cost of zero would claim a free call).

    A figure the provider left out counts as zero. Cache reads and writes are parts of
    ``prompt_tokens``; a report whose parts exceed the prompt (never seen, but not ours to trust)
    prices the parts and nothing else, never a negative remainder."""
    if prompt_tokens is None and completion_tokens is None:
        return None
    cached, written = cached_tokens or 0, cache_write_tokens or 0
    uncached = max(0, (prompt_tokens or 0) - cached - written)
    total = (
        uncached * prices.input
        + cached * prices.cached_input
        + written * prices.cache_write
        + (completion_tokens or 0) * prices.output
    )
    return total / MILLION


def reply_cost(model: PricedModel, usage: ReportedUsage) -> Decimal | None:
    """What a reply's reported ``usage`` costs at the prices of ``model``, the model that served it."""
    return usage_cost(
        Prices.of(model),
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        completion_tokens=usage.completion_tokens,
    )


def estimate_cost(prices: Prices, *, prompt_tokens: int, max_output_tokens: int) -> Decimal:
    """The most a call of ``prompt_tokens`` (our estimate) with a reply of at most
    ``max_output_tokens`` should cost: the whole prompt at the dearer of the input and cache-write
    prices, and the whole reply allowance at the output price."""
    prompt_price = max(prices.input, prices.cache_write)
    return (prompt_tokens * prompt_price + max_output_tokens * prices.output) / MILLION


# The vendors' list prices, per million tokens, standard tier: (input, cached input, cache write,
# output). Sources: OpenAI's API pricing page (cached input as listed there; OpenAI does not charge
# for cache writes) and Anthropic's pricing page (cache reads at 0.1 times and 5-minute cache writes
# at 1.25 times the input price, as its prompt-caching documentation states). Prices change: these
# are a starting point an operator checks, filled into a model row only when its prices are left
# empty (editors/admin/catalog.py) and into the demo's rows (editors/demo.py).
_USD = Decimal
CATALOGUE_PRICES: dict[str, tuple[Decimal, Decimal | None, Decimal | None, Decimal]] = {
    "gpt-4o": (_USD("2.50"), _USD("1.25"), None, _USD("10.00")),
    "gpt-4o-2024-05-13": (_USD("5.00"), None, None, _USD("15.00")),
    "gpt-4o-mini": (_USD("0.15"), _USD("0.075"), None, _USD("0.60")),
    "gpt-4.1": (_USD("2.00"), _USD("0.50"), None, _USD("8.00")),
    "gpt-4.1-mini": (_USD("0.40"), _USD("0.10"), None, _USD("1.60")),
    "gpt-4.1-nano": (_USD("0.10"), _USD("0.025"), None, _USD("0.40")),
    "o1": (_USD("15.00"), _USD("7.50"), None, _USD("60.00")),
    "o3-mini": (_USD("1.10"), _USD("0.55"), None, _USD("4.40")),
    "o3": (_USD("2.00"), _USD("0.50"), None, _USD("8.00")),
    "o4-mini": (_USD("1.10"), _USD("0.275"), None, _USD("4.40")),
    "gpt-5": (_USD("1.25"), _USD("0.125"), None, _USD("10.00")),
    "gpt-5-mini": (_USD("0.25"), _USD("0.025"), None, _USD("2.00")),
    "gpt-5-nano": (_USD("0.05"), _USD("0.005"), None, _USD("0.40")),
    "gpt-4-turbo": (_USD("10.00"), None, None, _USD("30.00")),
    "gpt-4": (_USD("30.00"), None, None, _USD("60.00")),
    "gpt-3.5-turbo": (_USD("0.50"), None, None, _USD("1.50")),
    "claude-sonnet-4-5-20250929": (_USD("3.00"), _USD("0.30"), _USD("3.75"), _USD("15.00")),
    "claude-haiku-4-5-20251001": (_USD("1.00"), _USD("0.10"), _USD("1.25"), _USD("5.00")),
    "claude-opus-4-1-20250805": (_USD("15.00"), _USD("1.50"), _USD("18.75"), _USD("75.00")),
    "claude-sonnet-4-20250514": (_USD("3.00"), _USD("0.30"), _USD("3.75"), _USD("15.00")),
    "claude-opus-4-20250514": (_USD("15.00"), _USD("1.50"), _USD("18.75"), _USD("75.00")),
    "claude-3-5-haiku-20241022": (_USD("0.80"), _USD("0.08"), _USD("1.00"), _USD("4.00")),
}


@dataclass(frozen=True)
class CatalogueModelPrices:
    """Shipped prices for a catalogue model, as the model row's four price fields take them."""

    input_price_per_million: Decimal
    cached_input_price_per_million: Decimal | None
    cache_write_price_per_million: Decimal | None
    output_price_per_million: Decimal

    def as_fields(self) -> dict[str, Decimal | None]:
        return {
            "input_price_per_million": self.input_price_per_million,
            "cached_input_price_per_million": self.cached_input_price_per_million,
            "cache_write_price_per_million": self.cache_write_price_per_million,
            "output_price_per_million": self.output_price_per_million,
        }


def catalogue_prices(model_id: str) -> CatalogueModelPrices | None:
    """The shipped prices of ``model_id`` (aliases and dated snapshots resolve as the catalogue
    resolves them, ``context_assembly.profiles.catalogue_get``); None for a model without them
    (self-hosted models, models outside the catalogue)."""
    entry = catalogue_get(model_id)
    figures = CATALOGUE_PRICES.get(entry.profile.model_id) if entry is not None else None
    return None if figures is None else CatalogueModelPrices(*figures)
