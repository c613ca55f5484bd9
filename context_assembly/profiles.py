"""Model profiles: what the estimator and the fit need to know about the model that serves a step.

A :class:`ModelProfile` is a plain value handed across the seam (``agents`` builds it from its
``LlmModel`` row and the model's persisted calibration). The built-in :data:`CATALOGUE` is a starting
point for editors, not a silent default: every figure in it names the vendor page it comes from, and a
model that is not in it has no profile until someone declares one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from context_assembly.errors import InvalidModelProfile

TOKENIZERS = ("o200k_base", "cl100k_base", "approximate")


@dataclass(frozen=True)
class ModelProfile:
    """The window and tokenizer of one model.

    * ``max_output_tokens`` is ``None`` when the vendor declares no separate output limit (typical of
      self-hosted models); the fit then falls back to its own reserve rule.
    * ``tokenizer`` ``"approximate"`` means no published tokenizer: the estimator counts with
      ``o200k_base`` and scales by ``calibration_factor``.
    * ``calibration_factor`` is the ratio of provider-reported prompt tokens to our estimate, as
      persisted per model by the calibration service. It is data on the profile, never process state.
    """

    model_id: str
    context_window: int
    max_output_tokens: int | None
    tokenizer: str
    calibration_factor: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.model_id, str) or not self.model_id:
            raise InvalidModelProfile("model_id must be a non-empty string", extra={"field": "model_id"})
        if not _positive_int(self.context_window):
            raise InvalidModelProfile(
                "context_window must be a positive integer", extra={"field": "context_window"}
            )
        if self.max_output_tokens is not None and not _positive_int(self.max_output_tokens):
            raise InvalidModelProfile(
                "max_output_tokens must be a positive integer or null", extra={"field": "max_output_tokens"}
            )
        if self.tokenizer not in TOKENIZERS:
            raise InvalidModelProfile(
                f"tokenizer must be one of {', '.join(TOKENIZERS)}", extra={"field": "tokenizer"}
            )
        factor = self.calibration_factor
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not math.isfinite(factor):
            raise InvalidModelProfile("calibration_factor must be a finite number", extra={"field": "factor"})
        if factor <= 0:
            raise InvalidModelProfile("calibration_factor must be positive", extra={"field": "factor"})

    @property
    def is_exact(self) -> bool:
        """True when the vendor's own tokenizer is available offline (counts are exact, not scaled)."""
        return self.tokenizer != "approximate"

    def with_calibration(self, factor: float) -> ModelProfile:
        """A copy carrying another calibration factor (the profile itself never changes)."""
        return replace(self, calibration_factor=factor)


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class CatalogueEntry:
    """A well-known model: its profile, the vendor page its figures come from, and caveats."""

    profile: ModelProfile
    source: str
    note: str = ""


# Seed for models without a published tokenizer. Not a vendor figure: it makes a fresh profile err
# high until measured calibration replaces it (1.15 is also the seed of nr_llm, the peer in bench/fit.py).
APPROXIMATE_SEED_FACTOR = 1.15

_OPENAI = "OpenAI API documentation, Models page"
_ANTHROPIC = "Anthropic documentation, Models overview"
_META = "Meta Llama 3.1 model card (meta-llama/Llama-3.1-8B-Instruct)"

# model id, context window, max output tokens (None: not declared), tokenizer, vendor page.
_ROWS: tuple[tuple[str, int, int | None, str, str], ...] = (
    ("gpt-4o", 128_000, 16_384, "o200k_base", f"{_OPENAI}: GPT-4o"),
    ("gpt-4o-mini", 128_000, 16_384, "o200k_base", f"{_OPENAI}: GPT-4o mini"),
    ("gpt-4.1", 1_047_576, 32_768, "o200k_base", f"{_OPENAI}: GPT-4.1"),
    ("gpt-4.1-mini", 1_047_576, 32_768, "o200k_base", f"{_OPENAI}: GPT-4.1 mini"),
    ("gpt-4.1-nano", 1_047_576, 32_768, "o200k_base", f"{_OPENAI}: GPT-4.1 nano"),
    ("o3", 200_000, 100_000, "o200k_base", f"{_OPENAI}: o3"),
    ("o4-mini", 200_000, 100_000, "o200k_base", f"{_OPENAI}: o4-mini"),
    ("gpt-4-turbo", 128_000, 4_096, "cl100k_base", f"{_OPENAI}: GPT-4 Turbo"),
    ("gpt-4", 8_192, 8_192, "cl100k_base", f"{_OPENAI}: GPT-4"),
    ("gpt-3.5-turbo", 16_385, 4_096, "cl100k_base", f"{_OPENAI}: GPT-3.5 Turbo"),
    ("claude-sonnet-4-20250514", 200_000, 64_000, "approximate", f"{_ANTHROPIC}: Claude Sonnet 4"),
    ("claude-opus-4-20250514", 200_000, 32_000, "approximate", f"{_ANTHROPIC}: Claude Opus 4"),
    ("claude-3-5-haiku-20241022", 200_000, 8_192, "approximate", f"{_ANTHROPIC}: Claude Haiku 3.5"),
    ("llama-3.1-8b-instruct", 131_072, None, "approximate", f"{_META}: 128K context"),
)

_REASONING = "reasoning tokens are generated as output and occupy the window too"
_NOTES = {
    "gpt-4o": "the gpt-4o-2024-05-13 snapshot had a 4,096 output limit; snapshots are not aliased",
    "o3": _REASONING,
    "o4-mini": _REASONING,
    "claude-sonnet-4-20250514": "a 1M-token window exists only behind the context-1m beta header",
    "llama-3.1-8b-instruct": "self-hosted: the serving engine's max length may be smaller; no output limit",
}


def _entry(model_id: str, window: int, output: int | None, tokenizer: str, source: str) -> CatalogueEntry:
    factor = APPROXIMATE_SEED_FACTOR if tokenizer == "approximate" else 1.0
    profile = ModelProfile(model_id, window, output, tokenizer, factor)
    return CatalogueEntry(profile, source, _NOTES.get(model_id, ""))


# Read-only: a process-wide table nobody may patch at run time.
CATALOGUE: Mapping[str, CatalogueEntry] = MappingProxyType({row[0]: _entry(*row) for row in _ROWS})

# Vendor aliases that resolve to the same dated model. Dated snapshots of OpenAI models are not
# aliased to the family: their limits have differed (see the gpt-4o note).
_ALIASES = {
    "claude-sonnet-4": "claude-sonnet-4-20250514",
    "claude-sonnet-4-0": "claude-sonnet-4-20250514",
    "claude-opus-4": "claude-opus-4-20250514",
    "claude-opus-4-0": "claude-opus-4-20250514",
    "claude-3-5-haiku": "claude-3-5-haiku-20241022",
    "claude-3-5-haiku-latest": "claude-3-5-haiku-20241022",
    "meta-llama/llama-3.1-8b-instruct": "llama-3.1-8b-instruct",
}


def catalogue_get(model_id: str) -> CatalogueEntry | None:
    """The catalogue entry for ``model_id`` (exact id or a listed alias, case-insensitive), else None.

    Never guesses from a prefix: an unknown model has no profile until one is declared.
    """
    key = model_id.strip().lower()
    return CATALOGUE.get(_ALIASES.get(key, key))
