"""Estimator accuracy against provider-reported prompt tokens, beside two peers' heuristics.

Run: ``.venv/bin/python bench/estimator_accuracy.py [--quick]``. Prints a table and ends with exactly one
JSON line (``{"benchmark": "estimator_accuracy", ...}``). It never passes or fails on time.

Data: every case is a request whose prompt tokens the provider reported, as published in the OpenAI
Cookbook notebook "How to count tokens with tiktoken" (examples/How_to_count_tokens_with_tiktoken.ipynb,
sections 6 and 7; the numbers are the notebook's printed ``response.usage.prompt_tokens``).

Peers, re-implemented or called on the same inputs:

* nr_llm's ``TranscriptEstimator`` (PHP), re-implemented from its published description: 8 tokens
  per message, 12 per tool call, UTF-8 bytes of prose / 3.5 and of dense text / 2.5, tool specs as
  compact JSON in the dense bucket, times ``max(1, calibration)``. Shown at calibration 1.0 (its
  telemetry figure) and at its fit seed 1.15.
* LangChain ``count_tokens_approximately`` (langchain-core), with its defaults and ``tools=``.

Our figures match exactly because the Cookbook's rules were checked against these very requests: this
shows the rules are implemented faithfully, not out-of-sample accuracy (calibration from reported usage
covers that in production).

A second part measures what the memo cache buys: counting a long transcript cold, then again after one
new message.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The typed errors build on DRF, which reads Django settings at import time.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402

from context_assembly.estimator import Estimator, TokenCache  # noqa: E402
from context_assembly.messages import Message, ToolSpec  # noqa: E402
from context_assembly.profiles import catalogue_get  # noqa: E402

SOURCE = (
    "OpenAI Cookbook, 'How to count tokens with tiktoken' "
    "(examples/How_to_count_tokens_with_tiktoken.ipynb), sections 6 and 7"
)

JARGON_MESSAGES = [
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

WEATHER_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful assistant that can answer to questions about the weather.",
    },
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]

WEATHER_TOOLS = [
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

# (case, model as named in the notebook, catalogue profile used, messages, tools, API-reported tokens)
CASES: list[tuple[str, str, str, list[dict[str, Any]], list[dict[str, Any]], int]] = [
    ("jargon", "gpt-3.5-turbo", "gpt-3.5-turbo", JARGON_MESSAGES, [], 129),
    ("jargon", "gpt-4-0613", "gpt-4", JARGON_MESSAGES, [], 129),
    ("jargon", "gpt-4", "gpt-4", JARGON_MESSAGES, [], 129),
    ("jargon", "gpt-4o", "gpt-4o", JARGON_MESSAGES, [], 124),
    ("jargon", "gpt-4o-mini", "gpt-4o-mini", JARGON_MESSAGES, [], 124),
    ("weather+tools", "gpt-3.5-turbo", "gpt-3.5-turbo", WEATHER_MESSAGES, WEATHER_TOOLS, 105),
    ("weather+tools", "gpt-4", "gpt-4", WEATHER_MESSAGES, WEATHER_TOOLS, 105),
    ("weather+tools", "gpt-4o", "gpt-4o", WEATHER_MESSAGES, WEATHER_TOOLS, 101),
    ("weather+tools", "gpt-4o-mini", "gpt-4o-mini", WEATHER_MESSAGES, WEATHER_TOOLS, 101),
]

NR_LLM_SEED = 1.15


def nr_llm_estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]], calibration: float) -> int:
    """nr_llm's TranscriptEstimator as described above (bytes, not characters)."""
    prose = dense = overhead = 0
    for message in messages:
        overhead += 8
        content = message.get("content")
        if isinstance(content, str):  # part lists count as 0 bytes there
            size = len(content.encode("utf-8"))
            if message.get("role") == "tool":
                dense += size
            else:
                prose += size
        if isinstance(message.get("tool_call_id"), str):
            dense += len(message["tool_call_id"].encode("utf-8"))
        for call in message.get("tool_calls") or []:
            overhead += 12
            prose += len(call["function"]["name"].encode("utf-8"))
            dense += len(call["function"]["arguments"].encode("utf-8"))
            dense += len(call["id"].encode("utf-8"))
    if tools:
        # PHP json_encode with JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE: compact, raw UTF-8.
        dense += len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    raw = math.ceil(prose / 3.5) + math.ceil(dense / 2.5) + overhead
    return math.ceil(raw * max(1.0, calibration))


def langchain_estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    return count_tokens_approximately(messages, tools=tools or None)


def our_estimate(profile_id: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    entry = catalogue_get(profile_id)
    assert entry is not None, profile_id
    estimator = Estimator(entry.profile, cache=TokenCache())
    parsed = [Message.from_openai(message) for message in messages]
    specs = [ToolSpec.from_openai(tool) for tool in tools]
    return estimator.count_request(parsed, specs)


def measure_cases() -> list[dict[str, Any]]:
    rows = []
    for case, model, profile_id, messages, tools, reported in CASES:
        figures = {
            "ours": our_estimate(profile_id, messages, tools),
            "nr_llm_seed": nr_llm_estimate(messages, tools, NR_LLM_SEED),
            "nr_llm_raw": nr_llm_estimate(messages, tools, 1.0),
            "langchain": langchain_estimate(messages, tools),
        }
        row: dict[str, Any] = {"case": case, "model": model, "reported": reported}
        for name, value in figures.items():
            row[name] = value
            row[f"{name}_error"] = value - reported
        rows.append(row)
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name in ("ours", "nr_llm_seed", "nr_llm_raw", "langchain"):
        errors = [row[f"{name}_error"] for row in rows]
        relative = [abs(row[f"{name}_error"]) / row["reported"] for row in rows]
        summary[name] = {
            "mean_abs_error": round(sum(map(abs, errors)) / len(errors), 2),
            "max_abs_error": max(map(abs, errors)),
            "mean_abs_pct_error": round(100 * sum(relative) / len(relative), 2),
            "exact": sum(1 for error in errors if error == 0),
        }
    return summary


def measure_recount(messages: int) -> dict[str, Any]:
    """Cold count of a transcript, then a re-count after appending one message (cache effect)."""
    cache = TokenCache()
    estimator = Estimator(catalogue_get("gpt-4o").profile, cache=cache)
    body = "The quarterly report shows steady growth across all regions and product lines. " * 8
    transcript = [Message("user" if i % 2 else "assistant", f"{i}: {body}") for i in range(messages)]
    started = time.perf_counter()
    cold = estimator.count_messages(transcript)
    cold_ms = (time.perf_counter() - started) * 1000
    transcript.append(Message("user", "And what about next quarter?"))
    started = time.perf_counter()
    warm = estimator.count_messages(transcript)
    warm_ms = (time.perf_counter() - started) * 1000
    return {
        "messages": messages,
        "tokens": cold,
        "cold_ms": round(cold_ms, 2),
        "recount_after_append_ms": round(warm_ms, 2),
        "recount_tokens": warm,
        "cache_hits": cache.hits,
        "cache_misses": cache.misses,
        "cache_entries": cache.size,
        "cache_approx_bytes": cache.approx_bytes(),
    }


_COLUMNS = (("ours", 9), ("nr_llm_seed", 13), ("nr_llm_raw", 12), ("langchain", 11))
_TITLES = {"ours": "ours", "nr_llm_seed": "nr_llm@1.15", "nr_llm_raw": "nr_llm@1.0", "langchain": "langchain"}


def _cell(row: dict[str, Any], name: str, width: int) -> str:
    return f"{row[name]}({row[f'{name}_error']:+d})".rjust(width)


def print_table(rows: list[dict[str, Any]]) -> None:
    titles = " ".join(_TITLES[name].rjust(width) for name, width in _COLUMNS)
    header = f"{'case':<14} {'model':<14} {'API':>5} {titles}"
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = " ".join(_cell(row, name, width) for name, width in _COLUMNS)
        print(f"{row['case']:<14} {row['model']:<14} {row['reported']:>5} {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller transcript for the cache part")
    args = parser.parse_args()
    rows = measure_cases()
    print(f"Source: {SOURCE}\nEach cell: estimate(error vs API-reported prompt tokens)\n")
    print_table(rows)
    summary = summarise(rows)
    print()
    for name, figures in summary.items():
        print(f"{name:<12} {figures}")
    recount = measure_recount(200 if args.quick else 2000)
    print(f"\nRe-count after one new message: {recount}")
    result = {
        "benchmark": "estimator_accuracy",
        "source": SOURCE,
        "quick": args.quick,
        "cases": rows,
        "summary": summary,
        "recount": recount,
    }
    print(json.dumps(result, separators=(",", ":")))


if __name__ == "__main__":
    main()
