"""What personal-data detection reports: the kinds (stored string values: never rename them), a finding
(kind and span, never the value), an operator's pattern, and the per-kind counts a receipt shows."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class PersonalDataKind(StrEnum):
    """What was found. Declaration order is the order of a summary and breaks ties between overlaps."""

    EMAIL = "email"
    PHONE = "phone"
    PAYMENT_CARD = "payment_card"
    IBAN = "iban"
    US_SSN = "us_ssn"
    UK_NINO = "uk_nino"
    DE_TAX_ID = "de_tax_id"
    FR_NIR = "fr_nir"
    IT_FISCAL_CODE = "it_fiscal_code"
    ES_DNI_NIE = "es_dni_nie"
    NL_BSN = "nl_bsn"
    IP_ADDRESS = "ip_address"
    CUSTOM = "custom"


KIND_ORDER: dict[PersonalDataKind, int] = {kind: rank for rank, kind in enumerate(PersonalDataKind)}


@dataclass(frozen=True, slots=True)
class Finding:
    """One span ``text[start:end]`` holding personal data of ``kind``. It never holds the value, so no
    ``repr``, log line or receipt built from it can carry one. ``pattern`` names the operator's pattern
    for ``custom`` findings (a name the operator chose, never matched text) and is empty otherwise."""

    kind: PersonalDataKind
    start: int
    end: int
    pattern: str = ""


@dataclass(frozen=True, slots=True)
class OperatorPattern:
    """A pattern an operator adds: every non-empty match of ``regex`` is a ``custom`` finding named
    ``name``. The regex is the operator's: no validator, no context word."""

    name: str
    regex: re.Pattern[str]

    def __repr__(self) -> str:  # the name is enough to tell patterns apart in a log
        return f"OperatorPattern({self.name!r})"


def summary(findings: Iterable[Finding]) -> dict[PersonalDataKind, int]:
    """How many findings of each kind, in kind order: what a receipt shows (never a value or a span)."""
    counts = Counter(finding.kind for finding in findings)
    return {kind: counts[kind] for kind in sorted(counts, key=KIND_ORDER.__getitem__)}
