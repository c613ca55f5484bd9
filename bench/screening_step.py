"""What personal-data screening adds to a run's step at a 200-message transcript, and to one 4 KB prompt.

Run: ``.venv/bin/python bench/screening_step.py [--quick]``. Ends with exactly one JSON line
(``{"benchmark": "screening_step", ...}``). It never passes or fails on time.

A run's step re-sends its transcript: the planner (``agents/runtime/plan.py``) screens every part after
redaction, a transcript message by its identity (``agents/runtime/screening.py``). Measured here,
without a database or a provider, on the screening alone:

* ``step``: a step whose 200 earlier messages (100 assistant tool calls with their results, one in
  ten holding a value) were screened at the step before, plus one new tool result of 1 KB: what the
  step adds to the planner (the identity lookups, the configuration's texts from the text memo, the
  new message screened);
* ``step_cold``: the same transcript in a worker that has never seen it (every message screened);
* ``prompt_4kb``: one 4 KB prompt seen for the first time (``governance.screening.found_in``).

The step overhead benchmark (``bench/step_overhead.py``) times the whole step, old and new.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def main() -> None:
    import django

    django.setup()
    from agents.runtime.request import TranscriptEntry
    from agents.runtime.screening import _MESSAGES, PartScreen
    from context_assembly.messages import Message, ToolCall
    from governance.screening import _FOUND, found_in
    from tests.personal_data_corpus import labelled_corpus, ordinary_prompts

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 50 if args.quick else 400
    rng = random.Random(39)
    ordinary = ordinary_prompts(count=300)
    values = labelled_corpus(seed=39, per_kind=20)

    def transcript() -> list[TranscriptEntry]:
        entries = []
        for n in range(100):
            call = ToolCall(
                id=f"call_{n}", name="lookup", arguments=json.dumps({"q": rng.choice(ordinary)[:80]})
            )
            entries.append(
                TranscriptEntry(Message(role="assistant", content="", tool_calls=(call,)), "editor_content")
            )
            text = rng.choice(values).text if n % 10 == 0 else rng.choice(ordinary)
            entries.append(
                TranscriptEntry(
                    Message(role="tool", content=text, tool_call_id=f"call_{n}"), "editor_content"
                )
            )
        return entries

    entries = transcript()
    configuration_texts = [rng.choice(ordinary) for _ in range(6)]

    def step(new: Message) -> None:
        screen = PartScreen()
        for text in configuration_texts:
            screen.text(text, own=False)
        screen.entries(
            [*entries, TranscriptEntry(new, "editor_content")], [*(e.message for e in entries), new]
        )

    step(Message(role="user", content="warm"))
    warm, cold, prompt = [], [], []
    for n in range(repeat):
        new = Message(
            role="tool", content=(rng.choice(ordinary) * 4)[:1024] + f" #{n}", tool_call_id="call_1"
        )
        start = time.perf_counter()
        step(new)
        warm.append(time.perf_counter() - start)
    for _ in range(max(10, repeat // 10)):
        _MESSAGES.clear()
        _FOUND.clear()
        start = time.perf_counter()
        step(Message(role="user", content="cold"))
        cold.append(time.perf_counter() - start)
    for n in range(repeat):
        text = "\n".join(rng.choice(ordinary) for _ in range(40))[:4096] + f" {n}"
        start = time.perf_counter()
        found_in(text)
        prompt.append(time.perf_counter() - start)
    result = {
        "step_ms": round(statistics.median(warm) * 1000, 3),
        "step_cold_ms": round(statistics.median(cold) * 1000, 3),
        "prompt_4kb_ms": round(statistics.median(prompt) * 1000, 3),
        "transcript_messages": len(entries),
        "repeat": repeat,
    }
    print("screening per step at a 200-message transcript (medians, ms)")
    for name, value in result.items():
        print(f"  {name:20} {value}")
    print(json.dumps({"benchmark": "screening_step", **result}, separators=(",", ":")))


if __name__ == "__main__":
    main()
