"""The built-in catalogue: dated snapshot ids resolve to their family, capabilities per model."""

from __future__ import annotations

from dataclasses import replace

import pytest

from context_assembly.badges import token_badge
from context_assembly.errors import InvalidModelProfile
from context_assembly.estimator import Estimator, TokenCache
from context_assembly.profiles import (
    CATALOGUE,
    DEFAULT_CAPABILITIES,
    ModelCapabilities,
    capabilities_for,
    catalogue_get,
    snapshot_family,
)

REASONING = ModelCapabilities(
    token_parameter="max_completion_tokens", sampling=False, system_role="developer"
)


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("gpt-4-0613", "gpt-4"),
        ("gpt-4-0314", "gpt-4"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-2024-11-20", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
        ("gpt-3.5-turbo-0125", "gpt-3.5-turbo"),
        ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano"),
        ("o1-2024-12-17", "o1"),
        ("o3-mini-2025-01-31", "o3-mini"),
        ("o3-2025-04-16", "o3"),
        ("o4-mini-2025-04-16", "o4-mini"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"),
        ("claude-sonnet-4-5-20260101", "claude-sonnet-4-5-20250929"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4-20250514"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku-20241022"),
        ("GPT-4o-2024-08-06", "gpt-4o"),
        (" gpt-4-0613 ", "gpt-4"),
        ("gpt-4-0229", "gpt-4"),  # -MMDD carries no year: February 29th is a date
    ],
)
def test_a_dated_snapshot_id_resolves_to_its_family(model_id, family):
    assert catalogue_get(model_id) is CATALOGUE[family]


@pytest.mark.parametrize(
    "model_id",
    [
        "gpt-4o-evil",
        "gpt-4o-mini-evil",
        "gpt-4o-evil-2024-08-06",  # the family must exist as it stands, never by prefix
        "gpt-4o2024-08-06",  # no hyphen before the date
        "gpt-4o-2024-13-01",  # month 13
        "gpt-4o-2023-02-29",  # not a leap year
        "gpt-4o-20241301",
        "gpt-4-1399",
        "gpt-4-0230",
        "gpt-4-613",  # three digits
        "gpt-4-06130",  # five digits
        "gpt-4-1106-preview",  # the date is not at the end
        "gpt-4-32k-0613",  # gpt-4-32k is not in the catalogue
        "gpt-4o-2024-08-06-2024-08-06",  # one date only
        "gpt-4o-2024-05-13-0101",  # a snapshot is not a family
        "claude-sonnet-4-20250514-20250514",
        "claude-3-5-sonnet-20241022",  # an unknown family
        "-2024-08-06",
        "2024-08-06",
        "",
    ],
)
def test_other_ids_do_not_resolve(model_id):
    assert catalogue_get(model_id) is None


def test_the_snapshot_rule_cuts_one_calendar_date_suffix_and_nothing_else():
    assert snapshot_family("gpt-4o-mini-2024-07-18") == "gpt-4o-mini"
    assert snapshot_family("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert snapshot_family("gpt-4-0613") == "gpt-4"
    assert snapshot_family("gpt-4o") is None
    assert snapshot_family("gpt-4o-evil") is None
    assert snapshot_family("gpt-4o-2024-08-06-0613") is None


def test_a_snapshot_whose_figures_differ_from_its_family_has_its_own_entry():
    assert catalogue_get("gpt-4o-2024-05-13").profile.max_output_tokens == 4_096
    assert catalogue_get("gpt-4o-2024-08-06").profile.max_output_tokens == 16_384
    assert catalogue_get("gpt-3.5-turbo-0613").profile.context_window == 4_096
    assert catalogue_get("gpt-3.5-turbo-1106").profile.context_window == 16_385


def test_dated_snapshots_take_their_familys_figures():
    gpt4 = catalogue_get("gpt-4-0613").profile
    assert (gpt4.context_window, gpt4.max_output_tokens, gpt4.tokenizer) == (8_192, 8_192, "cl100k_base")
    sonnet = catalogue_get("claude-sonnet-4-5-20250929")
    assert (sonnet.profile.context_window, sonnet.profile.max_output_tokens) == (200_000, 64_000)
    assert sonnet.capabilities.cache_min_tokens == 1_024


@pytest.mark.parametrize(
    "model_id", ["o1", "o3-mini", "o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "o3-mini-2025-01-31"]
)
def test_reasoning_models_take_max_completion_tokens_no_sampling_and_the_developer_role(model_id):
    entry = catalogue_get(model_id)
    media = () if model_id.startswith("o3-mini") else ("image", "pdf")  # o3-mini reads text only
    assert entry.capabilities == replace(REASONING, input_modalities=media)
    assert "Create chat completion" in entry.capabilities_source


@pytest.mark.parametrize("model_id", ["gpt-4o", "gpt-4.1", "gpt-4", "gpt-3.5-turbo", "llama-3.1-8b-instruct"])
def test_chat_models_take_max_tokens_sampling_and_the_system_role(model_id):
    media = ("image", "pdf") if model_id.startswith("gpt-4o") or model_id.startswith("gpt-4.1") else ()
    assert catalogue_get(model_id).capabilities == replace(DEFAULT_CAPABILITIES, input_modalities=media)


@pytest.mark.parametrize(
    ("model_id", "minimum", "thinking"),
    [
        ("claude-sonnet-4-5", 1_024, True),
        ("claude-opus-4-1-20250805", 1_024, True),
        ("claude-sonnet-4-0", 1_024, True),
        ("claude-opus-4", 1_024, True),
        ("claude-haiku-4-5-20251001", 4_096, True),
        ("claude-3-5-haiku-latest", 2_048, False),
    ],
)
def test_claude_models_name_their_minimum_cacheable_prompt_and_thinking(model_id, minimum, thinking):
    entry = catalogue_get(model_id)
    assert entry.capabilities.cache_min_tokens == minimum
    assert entry.capabilities.input_modalities == ("image", "pdf")
    assert entry.capabilities.thinking is thinking
    assert entry.capabilities_source == (
        "Anthropic documentation, Prompt caching (Cache limitations); Vision; PDF support; Extended thinking"
    )


def test_every_entry_with_capabilities_other_than_the_default_names_their_source():
    for entry in CATALOGUE.values():
        assert bool(entry.capabilities_source) == (entry.capabilities != DEFAULT_CAPABILITIES)


def test_declared_capabilities_override_the_catalogue_field_by_field():
    assert capabilities_for("o3") == replace(REASONING, input_modalities=("image", "pdf"))
    assert capabilities_for("o3", sampling=True) == ModelCapabilities(
        token_parameter="max_completion_tokens",
        sampling=True,
        system_role="developer",
        input_modalities=("image", "pdf"),
    )
    assert capabilities_for("gpt-4o", token_parameter="max_completion_tokens").token_parameter == (
        "max_completion_tokens"
    )
    assert capabilities_for("claude-haiku-4-5", cache_min_tokens=2_048).cache_min_tokens == 2_048
    assert capabilities_for("claude-haiku-4-5", thinking=False).thinking is False
    assert capabilities_for("my-local-model", thinking=True).thinking is True


def test_a_model_outside_the_catalogue_gets_the_plain_chat_defaults_unless_declared():
    assert capabilities_for("my-local-model") == DEFAULT_CAPABILITIES
    assert capabilities_for("my-reasoner", system_role="developer").system_role == "developer"


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"token_parameter": "max_output_tokens"}, "token_parameter"),
        ({"system_role": "assistant"}, "system_role"),
        ({"sampling": "yes"}, "sampling"),
        ({"cache_min_tokens": 0}, "cache_min_tokens"),
    ],
)
def test_capabilities_outside_the_vocabulary_raise_a_typed_error(values, field):
    with pytest.raises(InvalidModelProfile) as caught:
        ModelCapabilities(**values)
    assert caught.value.extra == {"field": field}


@pytest.mark.parametrize(
    ("setting", "family", "window"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o", 128_000),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", 200_000),
    ],
)
def test_token_badges_resolve_a_dated_badge_model_to_its_family(settings, setting, family, window):
    settings.TOKEN_BADGE_MODEL = setting
    badge = token_badge("Write plainly.")
    assert (badge.model_id, badge.context_window) == (family, window)
    assert badge.tokens == Estimator(CATALOGUE[family].profile, cache=TokenCache()).count_text(
        "Write plainly."
    )


def test_token_badges_stay_off_for_an_unknown_badge_model(settings):
    settings.TOKEN_BADGE_MODEL = "gpt-4o-evil"
    assert token_badge("Write plainly.") is None
