"""Model profiles: what the estimator and the fit need to know about the model that serves a step.

A :class:`ModelProfile` is a plain value handed across the seam (``agents`` builds it from its
``LlmModel`` row and the model's persisted calibration). :class:`ModelCapabilities` says what the
model's API accepts (which token parameter, sampling parameters, which role carries the system
message, the shortest prompt its provider caches); the provider adapters build request bodies from it,
never from the model's name. The built-in :data:`CATALOGUE` is a starting point for editors, not a
silent default: every figure in it names the vendor page it comes from, and a model that is not in it
has no profile until someone declares one.

Every lookup goes through :func:`catalogue_get`, which also resolves dated snapshot ids to their
family (see :func:`snapshot_family` for the exact rule).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

from context_assembly.errors import InvalidModelProfile
from context_assembly.media_costs import IMAGE_RULES, OPENAI_TILES
from context_assembly.parts import IMAGE, MODALITIES, PDF

TOKENIZERS = ("o200k_base", "cl100k_base", "approximate")
TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")
SYSTEM_ROLES = ("system", "developer")
TokenParameter = Literal["max_tokens", "max_completion_tokens"]
SystemRole = Literal["system", "developer"]


@dataclass(frozen=True, slots=True)
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
    # How images and PDF pages are counted: by OpenAI's tiles or Anthropic's pixels
    # (context_assembly/media_costs.py); the serving provider's kind decides (agents/runtime/plan.py).
    image_rule: str = OPENAI_TILES

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
        if self.image_rule not in IMAGE_RULES:
            raise InvalidModelProfile(
                f"image_rule must be one of {', '.join(IMAGE_RULES)}", extra={"field": "image_rule"}
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


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What one model's API accepts, as data the adapters read (never inferred from a model name).

    * ``token_parameter``: the name under which the reply limit is sent.
    * ``sampling``: whether sampling parameters (temperature, top_p, ...) are accepted; when False an
      adapter leaves them out rather than send a request the API refuses.
    * ``system_role``: the role of the system message on the OpenAI wire (``developer`` for models
      that replaced it). Anthropic has a top-level ``system`` parameter and ignores this.
    * ``cache_min_tokens``: the shortest prefix the provider caches when asked to (Anthropic's
      ``cache_control``); None when the catalogue does not know it (the adapter has its own default).
    * ``input_modalities``: what the model reads besides text (``image``, ``pdf``), sorted. A part
      of a modality the model does not declare is refused before anything is sent.
    * ``thinking``: whether the model takes extended thinking (Anthropic's ``thinking`` with a budget)
      and answers thinking blocks; a request for it to a model that does not is refused before
      anything is sent.

    The defaults are what plain chat models and OpenAI-compatible servers accept, i.e. what a model
    outside the catalogue is sent.
    """

    token_parameter: TokenParameter = "max_tokens"
    sampling: bool = True
    system_role: SystemRole = "system"
    cache_min_tokens: int | None = None
    input_modalities: tuple[str, ...] = ()
    thinking: bool = False

    def __post_init__(self) -> None:
        modalities = self.input_modalities
        if not isinstance(modalities, tuple | list) or any(m not in MODALITIES for m in modalities):
            raise InvalidModelProfile(
                f"input_modalities must hold only {', '.join(MODALITIES)}",
                extra={"field": "input_modalities"},
            )
        object.__setattr__(self, "input_modalities", tuple(sorted(set(modalities))))
        if self.token_parameter not in TOKEN_PARAMETERS:
            raise InvalidModelProfile(
                f"token_parameter must be one of {', '.join(TOKEN_PARAMETERS)}",
                extra={"field": "token_parameter"},
            )
        if not isinstance(self.sampling, bool):
            raise InvalidModelProfile("sampling must be a boolean", extra={"field": "sampling"})
        if self.system_role not in SYSTEM_ROLES:
            raise InvalidModelProfile(
                f"system_role must be one of {', '.join(SYSTEM_ROLES)}", extra={"field": "system_role"}
            )
        if self.cache_min_tokens is not None and not _positive_int(self.cache_min_tokens):
            raise InvalidModelProfile(
                "cache_min_tokens must be a positive integer or null", extra={"field": "cache_min_tokens"}
            )


DEFAULT_CAPABILITIES = ModelCapabilities()


@dataclass(frozen=True)
class CatalogueEntry:
    """A well-known model: its profile and capabilities, the vendor pages they come from, and caveats."""

    profile: ModelProfile
    source: str
    capabilities: ModelCapabilities = DEFAULT_CAPABILITIES
    capabilities_source: str = ""
    note: str = ""


# Seed for models without a published tokenizer. Not a vendor figure: it makes a fresh profile err
# high until measured calibration replaces it (1.15 is also the seed of nr_llm, the peer in bench/fit.py).
APPROXIMATE_SEED_FACTOR = 1.15

_OPENAI = "OpenAI API documentation, Models page"
_ANTHROPIC = "Anthropic documentation, Models overview"
_META = "Meta Llama 3.1 model card (meta-llama/Llama-3.1-8B-Instruct)"

# Capabilities, each with the vendor page that states it.
_CHAT = (DEFAULT_CAPABILITIES, "")
_MEDIA = (IMAGE, PDF)
# OpenAI documentation, "Images and vision" (image inputs) and "File inputs" (PDF files, "models with
# vision capabilities"); the Models page lists each model's input modalities.
_OPENAI_MEDIA_SOURCE = "OpenAI documentation, Images and vision; File inputs; Models page (modalities)"
_CHAT_MEDIA = (ModelCapabilities(input_modalities=_MEDIA), _OPENAI_MEDIA_SOURCE)
_CHAT_IMAGES = (ModelCapabilities(input_modalities=(IMAGE,)), _OPENAI_MEDIA_SOURCE)
# OpenAI API reference, "Create chat completion": max_tokens "is not compatible with o-series models"
# (use max_completion_tokens); developer messages replace system messages "with o1 models and newer".
# OpenAI documentation, "Reasoning models": temperature, top_p and the penalties are not supported.
_REASONING_SOURCE = (
    "OpenAI API reference, Create chat completion (max_completion_tokens, developer messages); "
    "OpenAI documentation, Reasoning models (no sampling parameters)"
)
_REASONING_TEXT = (
    ModelCapabilities(token_parameter="max_completion_tokens", sampling=False, system_role="developer"),
    _REASONING_SOURCE,
)
_REASONING = (
    ModelCapabilities(
        token_parameter="max_completion_tokens",
        sampling=False,
        system_role="developer",
        input_modalities=_MEDIA,
    ),
    f"{_REASONING_SOURCE}; {_OPENAI_MEDIA_SOURCE}",
)


Capabilities = tuple[ModelCapabilities, str]
# model id, context window, max output tokens (None: not declared), tokenizer, vendor page, capabilities.
_Row = tuple[str, int, int | None, str, str, Capabilities]


def _claude(
    model_id: str, max_output: int, name: str, *, cache_min_tokens: int, thinking: bool = True
) -> _Row:
    """A Claude model's row: every one has a 200K window and no published tokenizer."""
    # Anthropic documentation, "Prompt caching", section "Cache limitations": the minimum cacheable
    # prompt length per model; a shorter prefix is not cached (and no error is returned).
    # Anthropic documentation, "Vision" and "PDF support" ("All active models support PDF processing").
    # Anthropic documentation, "Extended thinking", "Supported models": the Claude 4 family (not 3.5).
    caching = (
        ModelCapabilities(cache_min_tokens=cache_min_tokens, input_modalities=_MEDIA, thinking=thinking),
        "Anthropic documentation, Prompt caching (Cache limitations); Vision; PDF support; Extended thinking",
    )
    return (model_id, 200_000, max_output, "approximate", f"{_ANTHROPIC}: {name}", caching)


_ROWS: tuple[_Row, ...] = (
    ("gpt-4o", 128_000, 16_384, "o200k_base", f"{_OPENAI}: GPT-4o", _CHAT_MEDIA),
    ("gpt-4o-2024-05-13", 128_000, 4_096, "o200k_base", f"{_OPENAI}: GPT-4o (gpt-4o-2024-05-13)", _CHAT_MEDIA),
    ("gpt-4o-mini", 128_000, 16_384, "o200k_base", f"{_OPENAI}: GPT-4o mini", _CHAT_MEDIA),
    ("gpt-4.1", 1_047_576, 32_768, "o200k_base", f"{_OPENAI}: GPT-4.1", _CHAT_MEDIA),
    ("gpt-4.1-mini", 1_047_576, 32_768, "o200k_base", f"{_OPENAI}: GPT-4.1 mini", _CHAT_MEDIA),
    ("gpt-4.1-nano", 1_047_576, 32_768, "o200k_base", f"{_OPENAI}: GPT-4.1 nano", _CHAT_MEDIA),
    ("o1", 200_000, 100_000, "o200k_base", f"{_OPENAI}: o1", _REASONING),
    ("o3-mini", 200_000, 100_000, "o200k_base", f"{_OPENAI}: o3-mini", _REASONING_TEXT),
    ("o3", 200_000, 100_000, "o200k_base", f"{_OPENAI}: o3", _REASONING),
    ("o4-mini", 200_000, 100_000, "o200k_base", f"{_OPENAI}: o4-mini", _REASONING),
    ("gpt-5", 400_000, 128_000, "o200k_base", f"{_OPENAI}: GPT-5", _REASONING),
    ("gpt-5-mini", 400_000, 128_000, "o200k_base", f"{_OPENAI}: GPT-5 mini", _REASONING),
    ("gpt-5-nano", 400_000, 128_000, "o200k_base", f"{_OPENAI}: GPT-5 nano", _REASONING),
    ("gpt-4-turbo", 128_000, 4_096, "cl100k_base", f"{_OPENAI}: GPT-4 Turbo", _CHAT_IMAGES),
    ("gpt-4", 8_192, 8_192, "cl100k_base", f"{_OPENAI}: GPT-4", _CHAT),
    ("gpt-3.5-turbo", 16_385, 4_096, "cl100k_base", f"{_OPENAI}: GPT-3.5 Turbo", _CHAT),
    ("gpt-3.5-turbo-0613", 4_096, 4_096, "cl100k_base", f"{_OPENAI}: GPT-3.5 Turbo (0613)", _CHAT),
    ("gpt-3.5-turbo-0301", 4_096, 4_096, "cl100k_base", f"{_OPENAI}: GPT-3.5 Turbo (0301)", _CHAT),
    _claude("claude-sonnet-4-5-20250929", 64_000, "Claude Sonnet 4.5", cache_min_tokens=1_024),
    _claude("claude-haiku-4-5-20251001", 64_000, "Claude Haiku 4.5", cache_min_tokens=4_096),
    _claude("claude-opus-4-1-20250805", 32_000, "Claude Opus 4.1", cache_min_tokens=1_024),
    _claude("claude-sonnet-4-20250514", 64_000, "Claude Sonnet 4", cache_min_tokens=1_024),
    _claude("claude-opus-4-20250514", 32_000, "Claude Opus 4", cache_min_tokens=1_024),
    _claude("claude-3-5-haiku-20241022", 8_192, "Claude Haiku 3.5", cache_min_tokens=2_048, thinking=False),
    ("llama-3.1-8b-instruct", 131_072, None, "approximate", f"{_META}: 128K context", _CHAT),
)  # fmt: skip

_REASONING_NOTE = "reasoning tokens are generated as output and occupy the window too"
_NOTES = {
    "gpt-4o": "dated snapshots resolve here, except gpt-4o-2024-05-13 (a 4,096 output limit)",
    "gpt-3.5-turbo": "dated snapshots resolve here, except 0613 and 0301 (a 4,096-token window)",
    "o1": _REASONING_NOTE,
    "o3-mini": _REASONING_NOTE,
    "o3": _REASONING_NOTE,
    "o4-mini": _REASONING_NOTE,
    "gpt-5": _REASONING_NOTE,
    "gpt-5-mini": _REASONING_NOTE,
    "gpt-5-nano": _REASONING_NOTE,
    "claude-sonnet-4-5-20250929": "a 1M-token window exists only behind the context-1m beta header",
    "claude-sonnet-4-20250514": "a 1M-token window exists only behind the context-1m beta header",
    "llama-3.1-8b-instruct": "self-hosted: the serving engine's max length may be smaller; no output limit",
}


def _entry(
    model_id: str, window: int, output: int | None, tokenizer: str, source: str, capabilities: Capabilities
) -> CatalogueEntry:
    factor = APPROXIMATE_SEED_FACTOR if tokenizer == "approximate" else 1.0
    profile = ModelProfile(model_id, window, output, tokenizer, factor)
    return CatalogueEntry(profile, source, *capabilities, note=_NOTES.get(model_id, ""))


# Read-only: a process-wide table nobody may patch at run time.
CATALOGUE: Mapping[str, CatalogueEntry] = MappingProxyType({row[0]: _entry(*row) for row in _ROWS})

# Vendor aliases that resolve to the same dated model.
_ALIASES = {
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
    "claude-opus-4-1": "claude-opus-4-1-20250805",
    "claude-sonnet-4": "claude-sonnet-4-20250514",
    "claude-sonnet-4-0": "claude-sonnet-4-20250514",
    "claude-opus-4": "claude-opus-4-20250514",
    "claude-opus-4-0": "claude-opus-4-20250514",
    "claude-3-5-haiku": "claude-3-5-haiku-20241022",
    "claude-3-5-haiku-latest": "claude-3-5-haiku-20241022",
    "meta-llama/llama-3.1-8b-instruct": "llama-3.1-8b-instruct",
}

# A snapshot date at the very end of an id, after a hyphen, in one of the three forms vendors use.
_SNAPSHOT_SUFFIXES = (
    re.compile(r"-(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$"),  # gpt-4o-2024-08-06
    re.compile(r"-(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})$"),  # claude-sonnet-4-5-20250929
    re.compile(r"-(?P<month>\d{2})(?P<day>\d{2})$"),  # gpt-4-0613 (no year; 02-29 allowed)
)


def _date_suffix(model_id: str) -> re.Match[str] | None:
    for pattern in _SNAPSHOT_SUFFIXES:
        match = pattern.search(model_id)
        if match is None:
            continue
        parts = match.groupdict()
        try:
            datetime.date(int(parts.get("year") or 2000), int(parts["month"]), int(parts["day"]))
        except ValueError:
            return None  # digits that are not a calendar date: not a snapshot suffix
        return match
    return None


def snapshot_family(model_id: str) -> str | None:
    """The family id of a dated snapshot id, else None.

    The rule: a trailing ``-YYYY-MM-DD``, ``-YYYYMMDD`` or ``-MMDD`` that is a calendar date is cut
    off, once; what remains is the family, provided it is not empty and carries no date suffix of
    its own. Nothing else is ever cut: ``gpt-4-1106-preview`` or ``gpt-4o-evil`` have no family, and
    whether a family exists is for :func:`catalogue_get` to say (an exact id or alias, never a prefix).
    """
    match = _date_suffix(model_id)
    if match is None:
        return None
    family = model_id[: match.start()]
    if not family or _date_suffix(family) is not None:
        return None
    return family


def _exact(key: str) -> CatalogueEntry | None:
    return CATALOGUE.get(_ALIASES.get(key, key))


def catalogue_get(model_id: str) -> CatalogueEntry | None:
    """The catalogue entry for ``model_id`` (case-insensitive), else None.

    The one resolution every catalogue lookup uses: the exact id or a listed alias first (so a
    snapshot whose figures differ from its family's has an entry of its own), then the family of a
    dated snapshot id (:func:`snapshot_family`) by exact id or alias. Never guesses from a prefix: an
    unknown model has no profile until one is declared.
    """
    key = model_id.strip().lower()
    entry = _exact(key)
    if entry is None:
        family = snapshot_family(key)
        entry = _exact(family) if family is not None else None
    return entry


def capabilities_for(
    model_id: str,
    *,
    token_parameter: TokenParameter | None = None,
    sampling: bool | None = None,
    system_role: SystemRole | None = None,
    cache_min_tokens: int | None = None,
    input_modalities: tuple[str, ...] | list[str] | None = None,
    thinking: bool | None = None,
) -> ModelCapabilities:
    """What the API of ``model_id`` accepts: each value given here (None: not declared) over the
    catalogue's value for the model (dated snapshots resolve to their family), else the default of a
    plain chat model (:data:`DEFAULT_CAPABILITIES`). Raises :class:`InvalidModelProfile` for a value
    outside the vocabulary."""
    entry = catalogue_get(model_id)
    base = entry.capabilities if entry is not None else DEFAULT_CAPABILITIES
    return ModelCapabilities(
        token_parameter=base.token_parameter if token_parameter is None else token_parameter,
        sampling=base.sampling if sampling is None else sampling,
        system_role=base.system_role if system_role is None else system_role,
        cache_min_tokens=base.cache_min_tokens if cache_min_tokens is None else cache_min_tokens,
        input_modalities=base.input_modalities if input_modalities is None else tuple(input_modalities),
        thinking=base.thinking if thinking is None else thinking,
    )
