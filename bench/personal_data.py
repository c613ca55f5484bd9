"""Personal-data detection: recall and false positives per kind on the labelled corpus, and the median
cost of screening a 4 KB prompt, beside Presidio's analyzer in the same run when it is installed
(requirements-bench.txt).

Run: ``.venv/bin/python bench/personal_data.py [--quick]``. Ends with exactly one JSON line
(``{"benchmark": "personal_data", ...}``). It never passes or fails on time or on a score.

The corpus is built here from a fixed seed (``tests/personal_data_corpus``): valid values of twelve
kinds with their check digits computed, in realistic sentences (250 per kind; 40 in quick mode), and
1,200 ordinary prompts (code, SQL, UUIDs, order numbers, dates, versions, prices, digests; 300 in quick
mode). A value counts as found when a finding of its kind covers exactly its span (Presidio: a result of
its entity type overlapping it with a score of at least 0.4). The false-positive rate of a kind is the
share of ordinary prompts with a finding of that kind.

The 4 KB prompts: ``prose`` (sentences with a few values among ordinary pieces, as a chat prompt
reads) and ``dense`` (ordinary pieces only: numbers in nearly every line), each screened ``--repeat``
times; medians of wall time. Presidio runs with the ``no_op`` NLP engine (no spaCy model), its default
English registry plus the UK NINO, ES NIF/NIE, IT fiscal code and DE tax id recognizers (which default
to other languages), asked only for the entities that match a kind here.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
# Presidio's e-mail recognizer would fetch the public suffix list; the bundled copy is enough.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

SIZE = 4096
PRESIDIO_ENTITIES = {
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "CREDIT_CARD": "payment_card",
    "IBAN_CODE": "iban",
    "US_SSN": "us_ssn",
    "UK_NINO": "uk_nino",
    "DE_TAX_ID": "de_tax_id",
    "IT_FISCAL_CODE": "it_fiscal_code",
    "ES_NIF": "es_dni_nie",
    "ES_NIE": "es_dni_nie",
    "IP_ADDRESS": "ip_address",
}
_WORDS = [
    "please",
    "review",
    "the",
    "draft",
    "and",
    "answer",
    "our",
    "customer",
    "about",
    "the",
    "refund",
    "this",
    "week",
    "with",
    "a",
    "short",
    "friendly",
    "note",
    "the",
    "context",
    "window",
    "model",
    "service",
    "snippet",
    "provider",
    "request",
    "budget",
    "reply",
    "tool",
    "call",
    "team",
]

Spans = Callable[[str], list[tuple[str, int, int]]]


def ours() -> Spans:
    from governance.guardrails.personal_data import find_personal_data

    return lambda text: [(f.kind.value, f.start, f.end) for f in find_personal_data(text)]


def presidio() -> tuple[Spans, float] | None:
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)  # one INFO line per call otherwise
    try:
        started = time.perf_counter()
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
        from presidio_analyzer.predefined_recognizers import (
            DeTaxIdRecognizer,
            EsNieRecognizer,
            EsNifRecognizer,
            ItFiscalCodeRecognizer,
            UkNinoRecognizer,
        )
    except ImportError:
        return None
    configuration = {"nlp_engine_name": "no_op", "models": [{"lang_code": "en", "model_name": "no_op"}]}
    nlp = NlpEngineProvider(nlp_configuration=configuration).create_engine()
    engine = AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])
    for recognizer in (
        UkNinoRecognizer,
        EsNifRecognizer,
        EsNieRecognizer,
        ItFiscalCodeRecognizer,
        DeTaxIdRecognizer,
    ):
        engine.registry.add_recognizer(recognizer(supported_language="en"))
    entities = sorted(PRESIDIO_ENTITIES)

    def spans(text: str) -> list[tuple[str, int, int]]:
        results = engine.analyze(text, language="en", entities=entities, score_threshold=0.4)
        return [(PRESIDIO_ENTITIES[r.entity_type], r.start, r.end) for r in results]

    return spans, time.perf_counter() - started


def accuracy(spans: Spans, labelled: Sequence, ordinary: Sequence[str], *, exact: bool) -> dict:
    found, total = Counter(), Counter()
    for case in labelled:
        total[case.kind.value] += 1
        hits = spans(case.text)
        if exact:
            found[case.kind.value] += (case.kind.value, case.start, case.end) in hits
        else:
            found[case.kind.value] += any(
                k == case.kind.value and s < case.end and case.start < e for k, s, e in hits
            )
    flagged_by_kind, flagged = Counter(), 0
    for prompt in ordinary:
        kinds = {kind for kind, _, _ in spans(prompt)}
        flagged += bool(kinds)
        flagged_by_kind.update(kinds)
    return {
        "recall": {kind: round(found[kind] / total[kind], 4) for kind in total},
        "false_positive_rate": {kind: round(flagged_by_kind[kind] / len(ordinary), 4) for kind in total},
        "ordinary_flagged": flagged,
    }


def prompts(labelled: Sequence, ordinary: Sequence[str]) -> dict[str, str]:
    rng = random.Random(4096)
    prose: list[str] = []
    while sum(map(len, prose)) < SIZE:
        draw = rng.random()
        if draw < 0.15:
            prose.append(rng.choice(ordinary))
        elif draw < 0.25:
            prose.append(rng.choice(labelled).text)
        else:
            prose.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randrange(8, 30))).capitalize() + ".")
    dense: list[str] = []
    while sum(map(len, dense)) < SIZE:
        dense.append(rng.choice(ordinary))
    return {"prose": "\n\n".join(prose)[:SIZE], "dense": "\n\n".join(dense)[:SIZE]}


def median_ms(spans: Spans, text: str, repeat: int) -> float:
    spans(text)  # warm caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        spans(text)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 3)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    import django

    django.setup()
    from tests.personal_data_corpus import labelled_corpus, ordinary_prompts

    labelled = labelled_corpus(per_kind=40 if args.quick else 250)
    ordinary = ordinary_prompts(count=300 if args.quick else 1200)
    texts = prompts(labelled, ordinary)
    repeat = 30 if args.quick else args.repeat
    result: dict = {"benchmark": "personal_data", "labelled": len(labelled), "ordinary": len(ordinary)}
    result["ours"] = accuracy(ours(), labelled, ordinary, exact=True)
    result["ours"]["ms_4kb"] = {name: median_ms(ours(), text, repeat) for name, text in texts.items()}
    peer = presidio()
    if peer is None:
        result["presidio"] = "not installed"
    else:
        spans, setup = peer
        result["presidio"] = accuracy(spans, labelled, ordinary, exact=False)
        result["presidio"]["setup_s"] = round(setup, 2)
        result["presidio"]["ms_4kb"] = {
            name: median_ms(spans, text, max(5, repeat // 10)) for name, text in texts.items()
        }
        result["presidio_over_ours"] = {
            name: round(result["presidio"]["ms_4kb"][name] / result["ours"]["ms_4kb"][name], 1)
            for name in texts
        }
    report(result)
    print(json.dumps(result, separators=(",", ":")))
    return 0


def report(result: dict) -> None:
    peer = result["presidio"] if isinstance(result["presidio"], dict) else None
    print(
        f"{'kind':<16}{'recall':>9}{'fp rate':>9}"
        + (f"{'presidio recall':>17}{'fp rate':>9}" if peer else "")
    )
    for kind, recall in result["ours"]["recall"].items():
        line = f"{kind:<16}{recall:>9.1%}{result['ours']['false_positive_rate'][kind]:>9.2%}"
        if peer:
            line += f"{peer['recall'][kind]:>17.1%}{peer['false_positive_rate'][kind]:>9.2%}"
        print(line)
    ordinary = result["ordinary"]
    print(f"ordinary prompts flagged: {result['ours']['ordinary_flagged']} of {ordinary}", end="")
    print(f" (presidio: {peer['ordinary_flagged']})" if peer else "")
    for name, ms in result["ours"]["ms_4kb"].items():
        line = f"4 KB {name} prompt: {ms} ms median"
        if peer:
            line += f"; presidio {peer['ms_4kb'][name]} ms ({result['presidio_over_ours'][name]}x)"
        print(line)


if __name__ == "__main__":
    raise SystemExit(main())
