"""Secret redaction speed over 147 KiB of mixed text, and its score on the canary suite.

Run: ``.venv/bin/python bench/redaction.py [--quick]``. Ends with exactly one JSON line
(``{"benchmark": "redaction", ...}``). It never passes or fails on time.

The text (150,528 characters) is the same on every run: the canary suite's negatives (hashes, UUIDs,
base64 images and documents, certificates, percent-encoded URLs, emoji, CJK punctuation) and its
realistic lines with a secret (five seeds: 350 lines), this repository's fitting and settings modules
as code, and prose, YAML and JSON drawn from a fixed seed, cut to length. It is redacted whole
(``redact(text)``) and as its 1,000-character parts, each ``--repeat`` times; its first 24 KiB are
also streamed through ``StreamRedactor`` in 3-character pieces, as a model streams a reply (at most
three times), and the longest tail held back is reported. The medians are reported (CPU time of this
process: the machine may be shared). To compare two versions of the redaction package, run this script with ``PYTHONPATH``
pointing at the other checkout first, in turns.
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

SIZE = 147 * 1024
PART = 1000
STREAMED = 24 * 1024
PIECE = 3
_WORDS = [
    "the",
    "context",
    "window",
    "model",
    "answers",
    "tokens",
    "a",
    "governed",
    "service",
    "key",
    "snippet",
    "skill",
    "provider",
    "request",
    "budget",
    "stream",
    "reply",
    "tool",
    "call",
    "argument",
    "configuration",
    "zone",
    "class",
    "ceiling",
    "policy",
    "event",
    "run",
    "step",
]


def corpus() -> str:
    from tests.canaries import generate_canaries, generate_negatives

    rng = random.Random(147)
    root = Path(__file__).resolve().parents[1]
    pieces = [negative.text for negative in generate_negatives()]
    pieces += [canary.context for seed in range(5) for canary in generate_canaries(seed)]
    pieces += [
        (root / "context_assembly" / "fitting.py").read_text(),
        (root / "config/settings/base.py").read_text(),
    ]
    while sum(map(len, pieces)) < SIZE:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(8, 30)))
        pieces.append(sentence.capitalize() + ".")
        pieces.append(f"worker:\n  port: {rng.randrange(1024, 65535)}\n  name: svc-{rng.randrange(1000)}")
        pieces.append(json.dumps({"id": rng.randrange(10**6), "tags": rng.sample(_WORDS, 3), "ok": True}))
    rng.shuffle(pieces)
    return "\n\n".join(pieces)[:SIZE]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    import django

    django.setup()
    from governance.guardrails.redaction import redact
    from governance.guardrails.redaction.streaming import StreamRedactor
    from tests.canaries import summary

    text = corpus()
    repeat = 3 if args.quick else args.repeat
    redact(text)  # warm the regex caches
    whole, parts = [], []
    chunks = [text[i : i + PART] for i in range(0, len(text), PART)]
    for _ in range(repeat):
        started = time.process_time()
        findings = redact(text).count
        whole.append(time.process_time() - started)
        started = time.process_time()
        for chunk in chunks:
            redact(chunk)
        parts.append(time.process_time() - started)
    streamed, held = [], 0
    for _ in range(min(repeat, 3)):
        started = time.process_time()
        redactor = StreamRedactor()
        for i in range(0, STREAMED, PIECE):
            redactor.feed(text[i : i + PIECE])
        redactor.finish()
        streamed.append(time.process_time() - started)
        held = redactor.max_held
    result = {
        "benchmark": "redaction",
        "characters": len(text),
        "findings": findings,
        "repeat": repeat,
        "whole_ms_median": round(statistics.median(whole) * 1000, 1),
        "parts_ms_median": round(statistics.median(parts) * 1000, 1),
        "streamed_characters": STREAMED,
        "streamed_ms_median": round(statistics.median(streamed) * 1000, 1),
        "streamed_max_held": held,
        "canaries": summary(redact),
    }
    print(
        f"redact 147 KiB whole: {result['whole_ms_median']} ms; in {len(chunks)} parts: {result['parts_ms_median']} ms;"
        f" its first 24 KiB streamed in {PIECE}-character pieces: {result['streamed_ms_median']} ms"
        f" (at most {held} characters held)"
    )
    print(json.dumps(result, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
