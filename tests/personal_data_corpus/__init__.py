"""A labelled corpus for personal-data detection, built when it is used: generated valid values of every
kind in realistic sentences (each labelled with its kind and span), and ordinary prompts (code, SQL,
UUIDs, order numbers, dates, versions, prices, digests) that hold none. Deterministic for a seed;
no data of real people, no files. Used by the tests and by ``bench/personal_data.py``."""

from __future__ import annotations

import random
from dataclasses import dataclass

from governance.guardrails.personal_data import PersonalDataKind

from .ordinary import ordinary_prompts
from .sentences import TEMPLATES
from .values import CHECKED_KINDS, VALUES, wrong_check_digit

SEED = 36
PER_KIND = 250
ORDINARY = 1200


@dataclass(frozen=True)
class Labelled:
    """A text holding one value of ``kind`` at ``text[start:end]``."""

    kind: PersonalDataKind
    text: str
    start: int
    end: int

    @property
    def value(self) -> str:
        return self.text[self.start : self.end]


def labelled(kind: PersonalDataKind, value: str, template: str) -> Labelled:
    before, after = template.split("{v}")
    text = before.replace("{{", "{").replace("}}", "}") + value + after.replace("{{", "{").replace("}}", "}")
    start = len(before.replace("{{", "{").replace("}}", "}"))
    return Labelled(kind, text, start, start + len(value))


def labelled_corpus(seed: int = SEED, per_kind: int = PER_KIND) -> list[Labelled]:
    """``per_kind`` sentences for every built-in kind, each with a fresh valid value."""
    rng = random.Random(seed)
    return [
        labelled(kind, draw(rng), rng.choice(TEMPLATES[kind]))
        for kind, draw in VALUES.items()
        for _ in range(per_kind)
    ]


def near_misses(seed: int = SEED, per_kind: int = 50) -> list[Labelled]:
    """Sentences like :func:`labelled_corpus`'s whose value has a wrong check digit (kinds with one)."""
    rng = random.Random(seed + 1)
    return [
        labelled(kind, wrong_check_digit(kind, VALUES[kind](rng)), rng.choice(TEMPLATES[kind]))
        for kind in VALUES
        if kind in CHECKED_KINDS
        for _ in range(per_kind)
    ]


__all__ = ["ORDINARY", "Labelled", "labelled_corpus", "near_misses", "ordinary_prompts"]
