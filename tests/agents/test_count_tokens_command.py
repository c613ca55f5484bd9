from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from context_assembly.profiles import catalogue_get
from tests.factories import model_make

pytestmark = pytest.mark.django_db

# The OpenAI Cookbook's "How to count tokens with tiktoken" example conversation: the API reported
# 124 prompt tokens for gpt-4o and gpt-4o-mini, and 129 for gpt-4 (cl100k_base).
COOKBOOK = [
    {
        "role": "system",
        "content": "You are a helpful, pattern-following assistant that translates corporate jargon into plain English.",
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
        "content": "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
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


def count(tmp_path, *args: str, messages=COOKBOOK, tools=None) -> dict:
    messages_file = tmp_path / "messages.json"
    messages_file.write_text(json.dumps(messages))
    argv = ["count_tokens", *args, "--messages", str(messages_file)]
    if tools is not None:
        tools_file = tmp_path / "tools.json"
        tools_file.write_text(json.dumps(tools))
        argv += ["--tools", str(tools_file)]
    out = StringIO()
    call_command(*argv, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize(("model", "expected"), [("gpt-4o", 124), ("gpt-4o-mini", 124), ("gpt-4", 129)])
def test_catalogue_models_match_the_api_reported_counts(tmp_path, model, expected):
    report = count(tmp_path, "--model", model)
    assert report["estimated"] == expected
    assert report["resolved_from"].startswith("catalogue: OpenAI API documentation")
    assert sum(m["tokens"] for m in report["breakdown"]["messages"]) + 3 == expected
    assert report["budget"]["remaining"] == report["budget"]["budget"] - expected


def test_an_llm_model_row_wins_over_the_catalogue(tmp_path):
    model_make(model_id="gpt-4o", context_window=8_192, max_output_tokens=1_000)
    report = count(tmp_path, "--model", "gpt-4o", "--max-tokens", "500")
    assert report["resolved_from"].endswith("/gpt-4o")
    assert report["budget"] == {
        "window": 8192,
        "reserve": 500,
        "safety": 246,
        "budget": 7446,
        "remaining": 7446 - 124,
    }


def test_tool_specs_are_counted(tmp_path):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City"}},
                },
            },
        }
    ]
    report = count(tmp_path, "--model", "gpt-4o", tools=tools)
    assert report["breakdown"]["tool_specs"] > 0
    assert report["estimated"] == 124 + report["breakdown"]["tool_specs"]


@pytest.mark.parametrize(
    ("model", "family", "expected"),
    [
        ("gpt-4-0613", "gpt-4", 129),
        ("gpt-4o-2024-08-06", "gpt-4o", 124),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", 124),
    ],
)
def test_a_dated_snapshot_counts_by_its_familys_rules(tmp_path, model, family, expected):
    report = count(tmp_path, "--model", model)
    assert (report["model"], report["profile_model"], report["estimated"]) == (model, family, expected)
    assert report["resolved_from"] == f"catalogue: {catalogue_get(family).source}"


def test_the_report_names_what_the_models_api_accepts(tmp_path):
    report = count(tmp_path, "--model", "o3-mini-2025-01-31")
    assert report["profile_model"] == "o3-mini"
    assert report["capabilities"] == {
        "token_parameter": "max_completion_tokens",
        "sampling": False,
        "system_role": "developer",
        "cache_min_tokens": None,
        "input_modalities": [],
        "thinking": False,
    }
    sonnet = count(tmp_path, "--model", "claude-sonnet-4-5-20250929")
    assert sonnet["budget"]["window"] == 200_000
    assert sonnet["capabilities"]["cache_min_tokens"] == 1_024
    assert sonnet["capabilities"]["thinking"] is True


@pytest.mark.parametrize("model", ["nope", "gpt-4o-evil", "gpt-4-32k-0613", "gpt-4o-2024-13-01"])
def test_an_unknown_model_is_a_clear_error(tmp_path, model):
    with pytest.raises(
        CommandError, match=f"Unknown model '{model}': no LlmModel row and not in the built-in"
    ):
        count(tmp_path, "--model", model)


def test_unknown_model_and_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(CommandError, match="Unknown model 'nope'"):
        count(tmp_path, "--model", "nope")
    with pytest.raises(CommandError, match="must hold a JSON list"):
        count(tmp_path, "--model", "gpt-4o", messages={"role": "user"})
    with pytest.raises(CommandError, match="content"):
        count(tmp_path, "--model", "gpt-4o", messages=[{"role": "user", "content": 5}])
