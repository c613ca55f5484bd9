"""The one estimator: exact counts against OpenAI's published figures, images, calibration, the cache,
offline loading and the seam's import rules."""

from __future__ import annotations

import os
import re
import socket
import threading
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

from context_assembly import encodings
from context_assembly import estimator as estimator_module
from context_assembly.encodings import EncodingUnavailable
from context_assembly.errors import EstimatorUnavailable, InvalidModelProfile
from context_assembly.estimator import Estimator, TokenCache
from context_assembly.media_costs import MAX_HIGH_DETAIL_IMAGE_TOKENS, image_tokens
from context_assembly.messages import ImagePart, Message, TextPart, ToolCall, ToolSpec
from context_assembly.profiles import CATALOGUE, ModelProfile, catalogue_get

REPO = Path(__file__).resolve().parents[2]

# OpenAI Cookbook, "How to count tokens with tiktoken" (examples/How_to_count_tokens_with_tiktoken.ipynb),
# section 6: "OpenAI's example" conversation. The notebook's cell output reports, from the API's
# usage.prompt_tokens: 129 for gpt-3.5-turbo, gpt-4-0613 and gpt-4; 124 for gpt-4o and gpt-4o-mini.
COOKBOOK_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
        "into plain English.",
    },
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Things working well together will increase revenue.",
    },
    {
        "role": "system",
        "name": "example_user",
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities for "
        "increased leverage.",
    },
    {
        "role": "system",
        "name": "example_assistant",
        "content": "Let's talk later when we're less busy about how to do better.",
    },
    {
        "role": "user",
        "content": "This late pivot means we don't have time to boil the ocean for the client deliverable.",
    },
]

# Same notebook, section 7 ("Counting tokens for chat completions with tool calls"): the API reported
# 105 prompt tokens for gpt-3.5-turbo and gpt-4, 101 for gpt-4o and gpt-4o-mini.
COOKBOOK_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "The city and state, e.g. San Francisco, CA",
                    },
                    "unit": {
                        "type": "string",
                        "description": "The unit of temperature to return",
                        "enum": ["celsius", "fahrenheit"],
                    },
                },
                "required": ["location"],
            },
        },
    }
]
COOKBOOK_TOOL_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful assistant that can answer to questions about the weather.",
    },
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]


def make_estimator(tokenizer: str = "o200k_base", factor: float = 1.0, cache: TokenCache | None = None):
    profile = ModelProfile("test-model", 128_000, 4_096, tokenizer, factor)
    return Estimator(profile, cache=cache if cache is not None else TokenCache())


def parse(messages):
    return [Message.from_openai(message) for message in messages]


# --- text and per-message counts -------------------------------------------------------------------


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_hello_world_is_two_tokens(tokenizer):
    assert make_estimator(tokenizer).count_text("hello world") == 2


def test_cookbook_string_examples_in_cl100k():
    # Cookbook sections 3 and 5: "tiktoken is great!" -> 6 tokens; the word and the Japanese
    # greeting in cl100k_base -> 6 and 9 tokens.
    estimator = make_estimator("cl100k_base")
    assert estimator.count_text("tiktoken is great!") == 6
    assert estimator.count_text("antidisestablishmentarianism") == 6
    assert estimator.count_text("お誕生日おめでとう") == 9
    assert make_estimator("o200k_base").count_text("お誕生日おめでとう") == 8


def test_special_token_text_is_counted_as_ordinary_text():
    assert make_estimator().count_text("<|endoftext|>") == 7
    assert make_estimator().count_text("") == 0


def test_message_count_is_overhead_role_content_and_name():
    estimator = make_estimator()
    assert estimator.count_message(Message("user", "hello world")) == 3 + 1 + 2
    assert estimator.count_message(Message("user", "hello world", name="bob")) == 3 + 1 + 2 + 1 + 1


def test_assistant_tool_calls_and_tool_results_are_counted():
    estimator = make_estimator()
    call = Message("assistant", "", tool_calls=(ToolCall("call_abc123", "get_weather", '{"city":"Paris"}'),))
    # overhead 3 + "assistant" 1 + per-call 3 + id 4 + name 2 + arguments 5
    assert estimator.count_message(call) == 18
    result = Message("tool", "It is 18 degrees.", tool_call_id="call_abc123")
    # overhead 3 + "tool" 1 + content 6 + tool_call_id 4
    assert estimator.count_message(result) == 14


@pytest.mark.parametrize(("tokenizer", "expected"), [("cl100k_base", 129), ("o200k_base", 124)])
def test_cookbook_example_conversation_matches_api_reported_prompt_tokens(tokenizer, expected):
    estimator = make_estimator(tokenizer)
    assert estimator.count_messages(parse(COOKBOOK_MESSAGES)) == expected


@pytest.mark.parametrize(
    ("model_id", "expected"), [("gpt-3.5-turbo", 129), ("gpt-4", 129), ("gpt-4o", 124), ("gpt-4o-mini", 124)]
)
def test_catalogue_profiles_count_the_cookbook_example_like_the_api(model_id, expected):
    estimator = Estimator(catalogue_get(model_id).profile, cache=TokenCache())
    assert estimator.count_messages(parse(COOKBOOK_MESSAGES)) == expected


def test_count_messages_is_the_sum_of_messages_plus_reply_priming():
    estimator = make_estimator()
    messages = parse(COOKBOOK_MESSAGES)
    assert [estimator.count_message(m) for m in messages] == [21, 17, 16, 24, 21, 22]
    assert estimator.count_messages(messages) == sum(estimator.count_message(m) for m in messages) + 3
    assert estimator.count_messages([]) == 3


# --- tool specs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tokenizer", "expected"), [("cl100k_base", 105), ("o200k_base", 101)])
def test_cookbook_tool_example_matches_api_reported_prompt_tokens(tokenizer, expected):
    estimator = make_estimator(tokenizer)
    tools = [ToolSpec.from_openai(tool) for tool in COOKBOOK_TOOLS]
    messages = parse(COOKBOOK_TOOL_MESSAGES)
    assert estimator.count_request(messages, tools) == expected
    assert estimator.count_tools(tools) == expected - estimator.count_messages(messages)


def test_tool_spec_overheads_follow_the_cookbook_rule():
    spec = ToolSpec(
        "get_weather",
        "Get the weather.",
        {"type": "object", "properties": {"city": {"type": "string", "description": "The city"}}},
    )
    # func_init + "get_weather:Get the weather" (5) + prop_init 3 + prop_key 3 + "city:string:The city" (4)
    # + func_end 12; func_init is 7 for o200k_base and 10 for cl100k_base.
    assert make_estimator("o200k_base").count_tools([spec]) == 7 + 5 + 3 + 3 + 4 + 12
    assert make_estimator("cl100k_base").count_tools([spec]) == 10 + 5 + 3 + 3 + 4 + 12
    assert make_estimator().count_tools([]) == 0


def test_func_end_is_charged_once_per_request():
    estimator = make_estimator()
    ping = ToolSpec("ping", "Ping.")
    pong = ToolSpec("pong", "Ping.")
    assert estimator.count_tools([ping]) == 7 + 3 + 12
    assert estimator.count_tools([ping, pong]) == (7 + 3) * 2 + 12


def test_nested_schema_keywords_are_charged_beyond_the_flat_rule():
    flat = ToolSpec("f", "", {"type": "object", "properties": {"city": {"type": "object"}}})
    nested = ToolSpec(
        "f",
        "",
        {
            "type": "object",
            "properties": {"city": {"type": "object", "properties": {"name": {"type": "string"}}}},
        },
    )
    estimator = make_estimator()
    assert estimator.count_tools([nested]) - estimator.count_tools([flat]) == estimator.count_text(
        '{"properties":{"name":{"type":"string"}}}'
    )


# --- images ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (ImagePart("https://example.test/i", "low"), 85),
        (ImagePart("https://example.test/i", "low", 4096, 8192), 85),
        # OpenAI vision guide examples: 1024x1024 high -> 765; 2048x4096 high -> 1105.
        (ImagePart("https://example.test/i", "high", 1024, 1024), 765),
        (ImagePart("https://example.test/i", "high", 2048, 4096), 1105),
        (ImagePart("https://example.test/i", "high", 100, 100), 255),
        (ImagePart("https://example.test/i", "auto", 1024, 1024), 765),
        # Unknown size: the documented maximum for the detail level.
        (ImagePart("https://example.test/i", "high"), 1445),
        (ImagePart("https://example.test/i", "auto"), 1445),
        (ImagePart("https://example.test/i", "high", 1024), 1445),
    ],
)
def test_image_parts_are_charged_by_the_documented_rule(part, expected):
    assert image_tokens(part) == expected


def test_image_maximum_is_the_largest_tile_count_any_size_can_reach():
    sizes = [(768, 2048), (2048, 768), (1000, 2700), (4000, 4000), (512, 4096)]
    charges = [image_tokens(ImagePart("https://example.test/i", "high", w, h)) for w, h in sizes]
    assert max(charges) == MAX_HIGH_DETAIL_IMAGE_TOKENS == 1445


def test_message_with_text_and_image_counts_both():
    message = Message("user", (TextPart("hello world"), ImagePart("https://example.test/i", "low")))
    assert make_estimator().count_message(message) == 3 + 1 + 2 + 85


# --- calibration and the approximate tokenizer -------------------------------------------------------


def test_exact_profiles_do_not_apply_the_factor_but_calibrated_does():
    estimator = make_estimator("o200k_base", factor=1.1)
    assert estimator.count_text("hello world") == 2
    assert estimator.count_message(Message("user", "hello world")) == 6
    assert estimator.calibrated(100) == 110
    assert estimator.calibrated(101) == 112


def test_approximate_profile_scales_the_o200k_count_and_rounds_up():
    estimator = make_estimator("approximate", factor=1.5)
    assert estimator.encoding_name == "o200k_base"
    assert estimator.is_exact is False
    assert estimator.count_text("hello world") == 3  # ceil(2 * 1.5)
    assert estimator.count_message(Message("user", "hello world", name="bob")) == 12  # ceil(8 * 1.5)
    assert estimator.reply_priming == 5  # ceil(3 * 1.5)
    assert estimator.calibrated(12) == 12  # already calibrated: never applied twice


def test_approximate_counts_stay_additive():
    estimator = make_estimator("approximate", factor=1.15)
    messages = parse(COOKBOOK_MESSAGES)
    total = estimator.count_messages(messages)
    assert total == sum(estimator.count_message(m) for m in messages) + estimator.reply_priming
    # ceil(1.15 x [21, 17, 16, 24, 21, 22]) = 25+20+19+28+25+26 = 143, plus ceil(1.15 x 3) = 4
    assert total == 147


def test_approximate_profiles_share_raw_counts_but_not_scaled_ones():
    cache = TokenCache()
    message = Message("user", "hello world")
    assert make_estimator("approximate", 1.0, cache).count_message(message) == 6
    assert make_estimator("approximate", 2.0, cache).count_message(message) == 12
    assert (cache.hits, cache.misses) == (1, 1)


# --- the cache ---------------------------------------------------------------------------------------


def test_cache_records_misses_then_hits_for_equal_content():
    cache = TokenCache()
    estimator = make_estimator(cache=cache)
    estimator.count_message(Message("user", "hello world"))
    assert (cache.hits, cache.misses, cache.size) == (0, 1, 1)
    estimator.count_message(Message("user", "hello world"))
    assert (cache.hits, cache.misses, cache.size) == (1, 1, 1)


def test_cache_keys_include_the_encoding():
    cache = TokenCache()
    message = Message("user", "hello world")
    make_estimator("o200k_base", cache=cache).count_message(message)
    make_estimator("cl100k_base", cache=cache).count_message(message)
    assert (cache.hits, cache.misses, cache.size) == (0, 2, 2)


def test_recounting_a_transcript_after_one_new_message_tokenizes_only_that_message():
    cache = TokenCache()
    estimator = make_estimator(cache=cache)
    transcript = [Message("user" if i % 2 else "assistant", f"turn {i} " * 50) for i in range(200)]
    first = estimator.count_messages(transcript)
    assert cache.misses == 200
    transcript.append(Message("user", "one more question"))
    second = estimator.count_messages(transcript)
    assert cache.misses == 201
    assert cache.hits == 200
    assert second == first + estimator.count_message(transcript[-1])


def test_cache_is_bounded_and_evicts_the_least_recently_used():
    cache = TokenCache(max_entries=2)
    estimator = make_estimator(cache=cache)
    a, b, c = Message("user", "a"), Message("user", "b"), Message("user", "c")
    estimator.count_message(a)
    estimator.count_message(b)
    estimator.count_message(a)  # a is now the most recently used
    estimator.count_message(c)  # evicts b
    assert cache.size == 2
    misses = cache.misses
    estimator.count_message(a)
    assert cache.misses == misses
    estimator.count_message(b)
    assert cache.misses == misses + 1


def test_cache_memory_estimate_grows_with_entries_and_zero_disables_storing():
    cache = TokenCache()
    empty = cache.approx_bytes()
    estimator = make_estimator(cache=cache)
    for index in range(100):
        estimator.count_message(Message("user", f"message {index}"))
    assert cache.size == 100
    assert cache.approx_bytes() > empty + 100 * 100
    disabled = TokenCache(max_entries=0)
    make_estimator(cache=disabled).count_message(Message("user", "x"))
    assert disabled.size == 0
    with pytest.raises(ValueError):
        TokenCache(max_entries=-1)


def test_cache_is_consistent_under_concurrent_counting():
    cache = TokenCache(max_entries=50)
    estimator = make_estimator(cache=cache)
    messages = [Message("user", f"message number {index}") for index in range(100)]
    expected = [make_estimator().count_message(m) for m in messages]
    results: list[list[int]] = []

    def work() -> None:
        results.append([estimator.count_message(m) for m in messages])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 8
    assert cache.hits + cache.misses == 800
    assert cache.size == 50


# --- offline, failures and the seam ------------------------------------------------------------------


def test_counting_never_uses_tiktokens_download_path(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network or tiktoken registry used")

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    monkeypatch.setattr(tiktoken, "encoding_for_model", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(encodings, "_loaded", {})  # force a fresh load from the shipped files
    for tokenizer in ("o200k_base", "cl100k_base"):
        assert make_estimator(tokenizer).count_text("hello world") == 2


def test_unloadable_encoding_raises_estimator_unavailable(monkeypatch):
    def unavailable(name):
        raise EncodingUnavailable(f"{name} missing")

    monkeypatch.setattr(estimator_module, "get_encoding", unavailable)
    with pytest.raises(EstimatorUnavailable) as caught:
        make_estimator("cl100k_base")
    assert caught.value.code == "estimator_unavailable"
    assert caught.value.extra == {"model_id": "test-model", "encoding": "cl100k_base"}


def _project_sources():
    skipped = {".venv", "var", "node_modules", ".git", "__pycache__"}
    for directory, subdirectories, files in os.walk(REPO):
        subdirectories[:] = [name for name in subdirectories if name not in skipped]
        yield from (Path(directory) / name for name in files if name.endswith(".py"))


def test_only_context_assembly_imports_tiktoken():
    pattern = re.compile(r"^\s*(import|from)\s+tiktoken\b", re.MULTILINE)
    offenders = [
        str(path.relative_to(REPO))
        for path in _project_sources()
        if path.relative_to(REPO).parts[0] != "context_assembly"
        and path.parent != Path(__file__).parent
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_context_assembly_imports_no_higher_app():
    pattern = re.compile(r"^\s*(import|from)\s+(agents|snippets|skills)\b", re.MULTILINE)
    offenders = [
        path.name
        for path in (REPO / "context_assembly").rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# --- profiles and the catalogue ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"context_window": 0}, "context_window"),
        ({"max_output_tokens": -1}, "max_output_tokens"),
        ({"tokenizer": "gpt2"}, "tokenizer"),
        ({"calibration_factor": 0.0}, "factor"),
        ({"calibration_factor": float("nan")}, "factor"),
        ({"model_id": ""}, "model_id"),
    ],
)
def test_invalid_profile_raises_typed_error(kwargs, field):
    values = {
        "model_id": "m",
        "context_window": 1000,
        "max_output_tokens": 100,
        "tokenizer": "o200k_base",
        "calibration_factor": 1.0,
    }
    with pytest.raises(InvalidModelProfile) as caught:
        ModelProfile(**{**values, **kwargs})
    assert caught.value.extra == {"field": field}


def test_catalogue_lookup_by_id_and_alias_never_by_prefix():
    assert catalogue_get("gpt-4o").profile.context_window == 128_000
    assert catalogue_get("gpt-4o").profile.max_output_tokens == 16_384
    assert catalogue_get("GPT-4.1").profile.context_window == 1_047_576
    assert catalogue_get("claude-sonnet-4").profile.model_id == "claude-sonnet-4-20250514"
    assert catalogue_get("claude-sonnet-4").profile.tokenizer == "approximate"
    assert catalogue_get("gpt-4o-2024-05-13").profile.max_output_tokens == 4_096
    assert catalogue_get("unknown-model") is None


def test_every_catalogue_entry_names_its_source_and_builds_an_estimator():
    for model_id, entry in CATALOGUE.items():
        assert entry.profile.model_id == model_id
        assert entry.source
        assert Estimator(entry.profile, cache=TokenCache()).count_text("hello world") >= 2


def test_with_calibration_returns_a_new_profile():
    profile = catalogue_get("gpt-4o").profile
    tuned = profile.with_calibration(1.2)
    assert (profile.calibration_factor, tuned.calibration_factor) == (1.0, 1.2)
    assert tuned.model_id == profile.model_id
