"""Window fitting of a long agent transcript: ours against two peers on the same input.

Run: ``.venv/bin/python bench/fit.py [--quick]``. Prints a table and ends with exactly one JSON line
(``{"benchmark": "fit", ...}``). It reports against targets and never passes or fails on time.

Input: a deterministic agent transcript of 2,000 messages (about 400k ``o200k_base`` tokens: assistant
tool calls with JSON arguments, tool results with JSON records, file excerpts and test logs,
assistant prose, occasional user turns) behind a head (system prompt + snippets, first user message
with a fenced skill block, a caller context item and the task), with four tool specs, fitted into the
``gpt-4o`` window (128,000; budget 107,776 after the 16,384 output reserve and the 3% margin).
``--quick`` uses the same input and fewer repetitions.

Figures (medians of N runs; N is printed per figure; each call timed as ``timeit`` does, with garbage
collection off during the call):

* ``cold``: a fresh token cache and freshly built Message objects (so digests are computed too);
* ``warm``: a :class:`Fitter` that fitted the transcript, then fits it with one new turn appended
  (the new turn is tokenized inside the timing; the rest is cached). Also shown: the same step with
  a fresh fitter (one cache lookup per message), and with rebuilt-but-equal Message objects (as when
  a transcript is re-read from the database: every digest is recomputed);
* ``raw tiktoken floor``: encoding every text of the request once, the least any exact count costs;
* LangChain ``trim_messages`` (langchain-core, strategy "last", include_system, start_on "human" —
  the documented workaround for orphaned tool messages) with a tiktoken counter per message using the
  same chat overheads, ``max_tokens`` = our budget. It has no cache, so every trim re-counts;
* nr_llm's ``ContextWindowManager::fit()`` re-implemented from its published description: the
  bytes/3.5 (prose) and bytes/2.5 (dense) estimator at its 1.15 seed, and its loop that drops the
  oldest turn and re-estimates the whole list after each drop.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The typed errors build on DRF, which reads Django settings at import time.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)

from context_assembly.assembly import AssemblyInputs, ContextItem, assemble  # noqa: E402
from context_assembly.encodings import get_encoding  # noqa: E402
from context_assembly.estimator import Estimator, TokenCache  # noqa: E402
from context_assembly.fitting import Fitter, budget_for, fit  # noqa: E402
from context_assembly.messages import Message, ToolCall, ToolSpec  # noqa: E402
from context_assembly.profiles import catalogue_get  # noqa: E402

MESSAGES = 2000
MODEL = "gpt-4o"
SEED = 20240611
NR_LLM_SEED = 1.15

_WORD_TEXT = (
    "the request handler reads configuration from environment variables and validates each value before "
    "the worker starts processing queued jobs while a retry policy bounds transient failures with backoff "
    "so that database connections remain pooled across tasks and the cache invalidates stale entries after "
    "each migration completes successfully although some legacy modules still import settings directly "
    "which makes tests brittle when fixtures override them inside nested transactions during cleanup"
)
WORDS = tuple(_WORD_TEXT.split())
PATHS = (
    "src/app/models.py",
    "src/app/services.py",
    "src/app/views.py",
    "tests/test_api.py",
    "config/settings.py",
)
TOOLS = (
    ToolSpec(
        "read_file",
        "Read a file of the repository.",
        {"type": "object", "properties": {"path": {"type": "string", "description": "Repository path"}}},
    ),
    ToolSpec(
        "search_code",
        "Search the repository for a pattern.",
        {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A regular expression"},
                "max_results": {"type": "integer", "description": "At most this many hits"},
            },
        },
    ),
    ToolSpec(
        "run_tests",
        "Run the test suite or a subset of it.",
        {"type": "object", "properties": {"selector": {"type": "string", "description": "A pytest node id"}}},
    ),
    ToolSpec(
        "list_records",
        "List records of a table.",
        {
            "type": "object",
            "properties": {
                "table": {"type": "string", "enum": ["orders", "customers", "invoices"]},
                "limit": {"type": "integer"},
            },
        },
    ),
)


# --- the input --------------------------------------------------------------------------------------


def prose(rng: random.Random, words: int) -> str:
    sentences, left = [], words
    while left > 0:
        size = min(left, rng.randint(8, 18))
        sentence = " ".join(rng.choice(WORDS) for _ in range(size))
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
        left -= size
    return " ".join(sentences)


def json_records(rng: random.Random, count: int) -> str:
    records = [
        {
            "id": rng.randint(10_000, 99_999),
            "customer": f"{rng.choice(WORDS)}-{rng.choice(WORDS)}",
            "status": rng.choice(["open", "paid", "overdue", "cancelled"]),
            "amount": round(rng.uniform(5, 5000), 2),
            "created": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00Z",
            "note": prose(rng, rng.randint(4, 12)),
        }
        for _ in range(count)
    ]
    return json.dumps({"records": records, "total": count}, indent=1)


def code_excerpt(rng: random.Random, lines: int) -> str:
    body = []
    for number in range(lines):
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
        keyword = rng.choice(["def", "return", "if", "self.", "for"])
        body.append(f"{number + 1:4d}    {keyword} {name}(value, {rng.randint(0, 99)})")
    return "\n".join(body)


def test_log(rng: random.Random, lines: int) -> str:
    outcomes = ("PASSED", "PASSED", "FAILED")
    body = [
        f"{rng.choice(PATHS)}::test_{rng.choice(WORDS)}_{rng.choice(WORDS)} {rng.choice(outcomes)}"
        for _ in range(lines)
    ]
    return "\n".join([*body, f"===== {lines} tests in {rng.uniform(1, 30):.2f}s ====="])


def tool_result(rng: random.Random, name: str) -> str:
    if name == "list_records":
        return json_records(rng, rng.randint(3, 7))
    if name == "read_file":
        return code_excerpt(rng, rng.randint(20, 48))
    if name == "run_tests":
        return test_log(rng, rng.randint(16, 36))
    hits = [f"{rng.choice(PATHS)}:{rng.randint(1, 400)}: {prose(rng, 10)}" for _ in range(rng.randint(6, 16))]
    return "\n".join(hits)


def tool_arguments(rng: random.Random, name: str) -> str:
    if name == "read_file":
        return json.dumps({"path": rng.choice(PATHS)})
    if name == "search_code":
        return json.dumps({"pattern": f"{rng.choice(WORDS)}.*{rng.choice(WORDS)}", "max_results": 20})
    if name == "run_tests":
        return json.dumps({"selector": f"{rng.choice(PATHS)}::test_{rng.choice(WORDS)}"})
    return json.dumps({"table": rng.choice(["orders", "customers", "invoices"]), "limit": 50})


def agent_turn(rng: random.Random, number: int) -> list[Message]:
    """One turn: an assistant message with one or two tool calls and their results, or prose."""
    if rng.random() < 0.15:
        return [Message("assistant", prose(rng, rng.randint(60, 160)))]
    calls = tuple(
        ToolCall(f"call_{number}_{index}", name, tool_arguments(rng, name))
        for index, name in enumerate(rng.sample([spec.name for spec in TOOLS], rng.choice([1, 1, 2])))
    )
    turn = [Message("assistant", prose(rng, rng.randint(10, 40)), tool_calls=calls)]
    turn += [Message("tool", tool_result(rng, call.name), tool_call_id=call.id) for call in calls]
    return turn


def build_transcript(messages: int) -> tuple[Message, ...]:
    rng = random.Random(SEED)
    transcript: list[Message] = []
    number = 0
    while len(transcript) < messages:
        if number and number % 12 == 0:
            transcript.append(Message("user", prose(rng, rng.randint(20, 60))))
        turn = agent_turn(rng, number)
        if len(transcript) + len(turn) > messages:  # fill up with one-message turns, never a half turn
            turn = [Message("assistant", prose(rng, 80))]
        transcript.extend(turn)
        number += 1
    return tuple(transcript[:messages])


def new_turn(run: int) -> tuple[Message, ...]:
    return tuple(agent_turn(random.Random(SEED + 1 + run), 100_000 + run))


def inputs_for(transcript: tuple[Message, ...]) -> AssemblyInputs:
    rng = random.Random(SEED - 1)
    skill = prose(rng, 600)
    skill_block = f"BEGIN UNTRUSTED SKILL DATA\n## code-review\n{skill}\nEND UNTRUSTED SKILL DATA"
    return AssemblyInputs(
        profile=catalogue_get(MODEL).profile,
        system_prompt="You are a careful software engineer. " + prose(rng, 180),
        snippet_block=f"STYLE:\n{prose(rng, 80)}\n\nSAFETY:\n{prose(rng, 60)}",
        skill_block=skill_block,
        caller_context=(ContextItem("ticket", prose(rng, 120), "editor_content"),),
        task_input="Find out why the nightly export fails and fix it. " + prose(rng, 40),
        task_input_data_class="editor_content",
        transcript=transcript,
        tool_specs=TOOLS,
    )


def rebuilt(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Equal but new Message objects (their digests are not computed yet)."""
    return tuple(
        Message(m.role, m.content, name=m.name, tool_calls=m.tool_calls, tool_call_id=m.tool_call_id)
        for m in messages
    )


# --- timing -----------------------------------------------------------------------------------------


def timed_ms(function: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time of one call, the way ``timeit`` measures: garbage collection off while it runs."""
    gc.disable()
    try:
        started = time.perf_counter()
        result = function()
        return (time.perf_counter() - started) * 1000, result
    finally:
        gc.enable()


def estimator_for(cache: TokenCache) -> Estimator:
    return Estimator(catalogue_get(MODEL).profile, cache=cache)


def with_transcript(base: AssemblyInputs, transcript: tuple[Message, ...]) -> AssemblyInputs:
    return dataclasses.replace(base, transcript=transcript)


def request_texts(messages: tuple[Message, ...]) -> list[str]:
    """Every text the estimator encodes for these messages (role, content, call fields, call id)."""
    texts: list[str] = []
    for message in messages:
        texts += [message.role, message.content if isinstance(message.content, str) else ""]
        texts += [text for call in message.tool_calls for text in (call.id, call.name, call.arguments)]
        texts += [message.tool_call_id] if message.tool_call_id else []
    return texts


def measure_cold_and_floor(base: AssemblyInputs, runs: int) -> dict[str, Any]:
    """Cold fits and the raw tiktoken floor, interleaved so that machine noise hits both alike."""
    encoding = get_encoding(catalogue_get(MODEL).profile.tokenizer)
    texts = request_texts(assemble(base).messages)
    cold, floor = [], []
    cache = TokenCache()
    for _ in range(runs):
        floor.append(timed_ms(lambda: sum(len(encoding.encode_ordinary(text)) for text in texts))[0])
        cache = TokenCache()
        # Fresh Message objects too: their digests (the cache keys) are computed inside the timing.
        assembled = assemble(with_transcript(base, rebuilt(base.transcript)))
        estimator = estimator_for(cache)
        cold.append(timed_ms(partial(fit, assembled, estimator=estimator))[0])
    return {
        "cold_ms": statistics.median(cold),
        "floor_ms": statistics.median(floor),
        "runs": runs,
        "cache_entries": cache.size,
        "cache_approx_bytes": cache.approx_bytes(),
    }


def measure_warm(base: AssemblyInputs, runs: int) -> dict[str, Any]:
    """One step later: the transcript plus one new turn (its messages tokenized inside the timing)."""
    cache = TokenCache()
    estimator = estimator_for(cache)
    base_assembled = assemble(base)
    fit(base_assembled, estimator=estimator)  # the base transcript's counts are now cached
    warm, precounted, fresh_fitter, misses, kept = [], [], [], [], 0
    for run in range(runs):
        fitter = Fitter(estimator)
        fitter.fit(base_assembled)
        step = assemble(with_transcript(base, base.transcript + new_turn(run)))  # new, equal head objects
        before = cache.misses
        elapsed, result = timed_ms(partial(fitter.fit, step))
        warm.append(elapsed)
        # Every miss is one message tokenized; only the new turn's messages should miss.
        misses.append(cache.misses - before - len(step.transcript) + len(base.transcript))
        kept = len(result.messages)
        fitter = Fitter(estimator)
        fitter.fit(base_assembled)
        step = assemble(with_transcript(base, base.transcript + new_turn(3 * runs + run)))
        for message in step.transcript[len(base.transcript) :]:
            estimator.count_message(message)  # as if counted when the new turn was stored
        precounted.append(timed_ms(partial(fitter.fit, step))[0])
        other = assemble(with_transcript(base, base.transcript + new_turn(runs + run)))
        fresh_fitter.append(timed_ms(partial(fit, other, estimator=estimator))[0])
    rebuilt_runs = max(3, runs // 20)
    rebuilt_ms = []
    for run in range(rebuilt_runs):
        step = assemble(with_transcript(base, rebuilt(base.transcript + new_turn(2 * runs + run))))
        rebuilt_ms.append(timed_ms(partial(fit, step, estimator=estimator))[0])
    return {
        "warm_ms": statistics.median(warm),
        "warm_p90_ms": statistics.quantiles(warm, n=10)[-1],
        "warm_precounted_ms": statistics.median(precounted),
        "runs": runs,
        "kept_messages": kept,
        "cached_messages_retokenized": max(misses),
        "fresh_fitter_ms": statistics.median(fresh_fitter),
        "rebuilt_messages_ms": statistics.median(rebuilt_ms),
        "rebuilt_runs": rebuilt_runs,
    }


# --- peers ------------------------------------------------------------------------------------------


def to_langchain(message: Message) -> BaseMessage:
    content = message.content if isinstance(message.content, str) else ""
    if message.role == "system":
        return SystemMessage(content)
    if message.role == "user":
        return HumanMessage(content)
    if message.role == "tool":
        return ToolMessage(content, tool_call_id=message.tool_call_id)
    calls = [{"name": c.name, "args": json.loads(c.arguments), "id": c.id} for c in message.tool_calls]
    return AIMessage(content, tool_calls=calls)


def langchain_counter() -> Callable[[list[BaseMessage]], int]:
    """A tiktoken list counter with the same chat overheads as ours (3 per message, role, call fields).

    A list counter, as LangChain itself builds from a per-message one (it detects those by an annotation
    this module's postponed annotations would hide). No cache: LangChain keeps none between calls.
    """
    encoding = get_encoding(catalogue_get(MODEL).profile.tokenizer)
    roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}

    def count_one(message: BaseMessage) -> int:
        text = message.content if isinstance(message.content, str) else ""
        total = 3 + len(encoding.encode_ordinary(roles[message.type])) + len(encoding.encode_ordinary(text))
        for call in getattr(message, "tool_calls", None) or []:
            arguments = json.dumps(call["args"])
            total += 3 + sum(len(encoding.encode_ordinary(t)) for t in (call["id"], call["name"], arguments))
        if isinstance(message, ToolMessage):
            total += len(encoding.encode_ordinary(message.tool_call_id))
        return total

    def count(messages: list[BaseMessage]) -> int:
        return sum(count_one(message) for message in messages)

    return count


def measure_langchain(messages: tuple[Message, ...], budget: int, runs: int) -> dict[str, Any]:
    converted = [to_langchain(message) for message in messages]
    counter = langchain_counter()
    times, kept, keeps_task = [], 0, False
    for _ in range(runs):
        elapsed, result = timed_ms(
            lambda: trim_messages(
                converted,
                max_tokens=budget,
                token_counter=counter,
                strategy="last",
                include_system=True,
                start_on="human",
            )
        )
        times.append(elapsed)
        kept = len(result)
        keeps_task = any(message is converted[1] for message in result)
    return {"ms": statistics.median(times), "runs": runs, "kept_messages": kept, "keeps_task": keeps_task}


def nr_llm_estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]], calibration: float) -> int:
    """nr_llm's TranscriptEstimator: UTF-8 bytes, not tokens."""
    prose_bytes = dense = overhead = 0
    for message in messages:
        overhead += 8
        content = message.get("content")
        if isinstance(content, str):
            size = len(content.encode("utf-8"))
            if message["role"] == "tool":
                dense += size
            else:
                prose_bytes += size
        if isinstance(message.get("tool_call_id"), str):
            dense += len(message["tool_call_id"].encode("utf-8"))
        for call in message.get("tool_calls") or []:
            overhead += 12
            prose_bytes += len(call["function"]["name"].encode("utf-8"))
            dense += len(call["function"]["arguments"].encode("utf-8"))
            dense += len(call["id"].encode("utf-8"))
    if tools:
        dense += len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    raw = math.ceil(prose_bytes / 3.5) + math.ceil(dense / 2.5) + overhead
    return math.ceil(raw * max(1.0, calibration))


def nr_llm_fit(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], window: int, max_output: int
) -> int:
    """``ContextWindowManager::fit()`` , first send (calibration seed 1.15).

    Returns the number of kept messages. Faithful to its cost: every drop re-estimates head + kept.
    """
    reserve = max_output if max_output > 0 else max(1000, math.ceil(window * 0.02))
    budget = window - reserve - math.ceil(window * 0.03)
    first_user = next((i for i, m in enumerate(messages) if m["role"] == "user"), len(messages) - 1)
    head, rest = messages[: first_user + 1], messages[first_user + 1 :]
    turns: list[list[dict[str, Any]]] = []
    for message in rest:  # a turn opens at each assistant message; earlier ones join the first turn
        if message["role"] == "assistant" or not turns:
            turns.append([])
        turns[-1].append(message)
    if nr_llm_estimate(messages, tools, NR_LLM_SEED) <= budget:
        return len(messages)
    kept = list(turns)
    while len(kept) > 1 and nr_llm_estimate(head + [m for t in kept for m in t], tools, NR_LLM_SEED) > budget:
        kept.pop(0)
    result = head + [m for turn in kept for m in turn]
    declared: set[str] = set()
    for message in result:  # the pairing guard: on failure it returns the original list
        declared.update(call["id"] for call in message.get("tool_calls") or [])
        if message["role"] == "tool" and message["tool_call_id"] not in declared:
            return len(messages)
    return len(result)


def measure_nr_llm(messages: tuple[Message, ...], runs: int) -> dict[str, Any]:
    profile = catalogue_get(MODEL).profile
    wire = [message.to_openai() for message in messages]
    tools = [spec.to_openai() for spec in TOOLS]
    window, max_output = profile.context_window, profile.max_output_tokens or 0
    times, kept = [], 0
    for _ in range(runs):
        elapsed, kept = timed_ms(lambda: nr_llm_fit(wire, tools, window, max_output))
        times.append(elapsed)
    return {"ms": statistics.median(times), "runs": runs, "kept_messages": kept}


# --- report -----------------------------------------------------------------------------------------


def run(quick: bool) -> dict[str, Any]:
    transcript = build_transcript(MESSAGES)
    base = inputs_for(transcript)
    budget = budget_for(base.profile).budget
    step = assemble(with_transcript(base, transcript + new_turn(0)))
    total = estimator_for(TokenCache()).count_request(step.messages, TOOLS)
    cold = measure_cold_and_floor(base, 3 if quick else 7)
    warm = measure_warm(base, 60 if quick else 200)
    slow_runs = 1 if quick else 3
    langchain = measure_langchain(step.messages, budget, slow_runs)
    nr_llm = measure_nr_llm(step.messages, slow_runs)
    return {
        "benchmark": "fit",
        "quick": quick,
        "model": MODEL,
        "messages": len(transcript),
        "request_tokens": total,
        "budget": budget,
        "cold_ms": round(cold["cold_ms"], 2),
        "cold_runs": cold["runs"],
        "floor_ms": round(cold["floor_ms"], 2),
        "cold_over_floor": round(cold["cold_ms"] / cold["floor_ms"], 3),
        "warm_ms": round(warm["warm_ms"], 4),
        "warm_p90_ms": round(warm["warm_p90_ms"], 4),
        "warm_runs": warm["runs"],
        "warm_precounted_ms": round(warm["warm_precounted_ms"], 4),
        "warm_fresh_fitter_ms": round(warm["fresh_fitter_ms"], 3),
        "warm_rebuilt_messages_ms": round(warm["rebuilt_messages_ms"], 2),
        "warm_rebuilt_runs": warm["rebuilt_runs"],
        "cached_messages_retokenized": warm["cached_messages_retokenized"],
        "kept_messages": warm["kept_messages"],
        "cache_entries": cold["cache_entries"],
        "cache_approx_bytes": cold["cache_approx_bytes"],
        "langchain_trim_ms": round(langchain["ms"], 2),
        "langchain_runs": langchain["runs"],
        "langchain_kept_messages": langchain["kept_messages"],
        "langchain_keeps_first_user_message": langchain["keeps_task"],
        "langchain_over_warm": round(langchain["ms"] / warm["warm_ms"], 1),
        "langchain_over_cold": round(langchain["ms"] / cold["cold_ms"], 2),
        "nr_llm_fit_ms": round(nr_llm["ms"], 2),
        "nr_llm_runs": nr_llm["runs"],
        "nr_llm_kept_messages": nr_llm["kept_messages"],
        "nr_llm_over_warm": round(nr_llm["ms"] / warm["warm_ms"], 1),
        "nr_llm_over_cold": round(nr_llm["ms"] / cold["cold_ms"], 2),
        "targets": {
            "warm_le_1ms": warm["warm_ms"] <= 1.0,
            "warm_100x_faster_than_trim_messages": langchain["ms"] / warm["warm_ms"] >= 100,
            "cold_le_1_2x_floor": cold["cold_ms"] <= 1.2 * cold["floor_ms"],
        },
    }


def print_table(figures: dict[str, Any]) -> None:
    print(
        f"Input: {figures['messages']:,} transcript messages, {figures['request_tokens']:,} request tokens "
        f"({MODEL}, o200k_base); budget {figures['budget']:,}\n"
    )
    rows = [
        (
            "ours: cold fit (fresh cache)",
            figures["cold_ms"],
            figures["cold_runs"],
            figures["kept_messages"],
            "",
        ),
        (
            "ours: warm fit (Fitter, +1 turn)",
            figures["warm_ms"],
            figures["warm_runs"],
            figures["kept_messages"],
            "",
        ),
        (
            "ours: warm fit, new turn pre-counted",
            figures["warm_precounted_ms"],
            figures["warm_runs"],
            None,
            "",
        ),
        ("ours: warm fit, fresh Fitter", figures["warm_fresh_fitter_ms"], figures["warm_runs"], None, ""),
        (
            "ours: warm fit, rebuilt messages",
            figures["warm_rebuilt_messages_ms"],
            figures["warm_rebuilt_runs"],
            None,
            "",
        ),
        ("raw tiktoken floor (encode once)", figures["floor_ms"], figures["cold_runs"], None, ""),
        (
            "LangChain trim_messages",
            figures["langchain_trim_ms"],
            figures["langchain_runs"],
            figures["langchain_kept_messages"],
            f"{figures['langchain_over_warm']:,}x warm, {figures['langchain_over_cold']}x cold",
        ),
        (
            "nr_llm fit() (bytes/3.5 loop)",
            figures["nr_llm_fit_ms"],
            figures["nr_llm_runs"],
            figures["nr_llm_kept_messages"],
            f"{figures['nr_llm_over_warm']:,}x warm, {figures['nr_llm_over_cold']}x cold",
        ),
    ]
    header = f"{'what':<40} {'median ms':>11} {'N':>4} {'kept':>6}  peer/ours"
    print(header)
    print("-" * len(header))
    for name, ms, runs, kept, ratio in rows:
        kept_text = "" if kept is None else f"{kept:,}"
        print(f"{name:<40} {ms:>11,.3f} {runs:>4} {kept_text:>6}  {ratio}")
    print(
        f"\ncold / floor = {figures['cold_over_floor']}; token cache: {figures['cache_entries']:,} entries, "
        f"~{figures['cache_approx_bytes'] / 1024:,.0f} KiB; cached messages re-tokenized by a warm fit: "
        f"{figures['cached_messages_retokenized']}"
    )
    print(
        "LangChain keeps the first user message (task, skills): "
        f"{figures['langchain_keeps_first_user_message']}; it does not count the tool specs."
    )
    print(f"targets (reported, not asserted): {figures['targets']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="same input, fewer repetitions")
    args = parser.parse_args()
    figures = run(args.quick)
    print_table(figures)
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
