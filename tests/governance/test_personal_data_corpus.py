"""Personal-data detection on the labelled corpus built at test time: every generated value is one its
kind's library accepts, every one is found with its exact kind and span, values with a wrong check digit
are not, and the 1,200 ordinary prompts (code, SQL, UUIDs, order numbers, dates, versions) yield none."""

from __future__ import annotations

import ipaddress
import re
from collections import Counter

import phonenumbers
from stdnum import iban, luhn
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.us import ssn

from governance.guardrails.personal_data import Finding, PersonalDataKind, find_personal_data
from tests.personal_data_corpus import ORDINARY, labelled_corpus, near_misses, ordinary_prompts

K = PersonalDataKind
_NINO = re.compile(r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]")
_EMAIL = re.compile(r"[a-z0-9._]+@[a-z0-9.-]+\.[a-z]{2,}")


def _compact(value: str) -> str:
    return re.sub(r"[\s./-]", "", value).upper()


def _library_accepts(kind: PersonalDataKind, value: str) -> bool:
    number = _compact(value)
    checks = {
        K.EMAIL: lambda: _EMAIL.fullmatch(value) is not None,
        K.PHONE: lambda: phonenumbers.is_valid_number(phonenumbers.parse(value, "US")),
        K.PAYMENT_CARD: lambda: luhn.is_valid(number),
        K.IBAN: lambda: iban.is_valid(number),
        K.US_SSN: lambda: ssn.is_valid(number),
        K.UK_NINO: lambda: _NINO.fullmatch(number) is not None,
        K.DE_TAX_ID: lambda: idnr.is_valid(number),
        K.FR_NIR: lambda: nir.is_valid(number),
        K.IT_FISCAL_CODE: lambda: codicefiscale.is_valid(number),
        K.ES_DNI_NIE: lambda: (nie if number[0] in "XYZ" else dni).is_valid(number),
        K.NL_BSN: lambda: bsn.is_valid(number),
        K.IP_ADDRESS: lambda: ipaddress.ip_address(value).is_global,
    }
    return checks[kind]()


def test_every_generated_value_is_valid_for_its_library() -> None:
    corpus = labelled_corpus()
    assert Counter(case.kind for case in corpus) == {kind: 250 for kind in K if kind != K.CUSTOM}
    assert [case.value for case in corpus if not _library_accepts(case.kind, case.value)] == []


def test_every_labelled_value_is_found_with_its_kind_and_span() -> None:
    missed = [
        (case.kind.value, case.value)
        for case in labelled_corpus()
        if Finding(case.kind, case.start, case.end) not in find_personal_data(case.text)
    ]
    assert missed == []


def test_near_misses_with_a_wrong_check_digit_are_not_found() -> None:
    cases = near_misses()
    assert len(cases) == 350
    assert [case.value for case in cases if _library_accepts(case.kind, case.value)] == []
    found = [(case.kind.value, case.value) for case in cases if find_personal_data(case.text)]
    assert found == []


def test_ordinary_prompts_yield_no_findings() -> None:
    prompts = ordinary_prompts()
    assert len(prompts) == ORDINARY == 1200
    flagged = {
        index: [(f.kind.value, prompt[f.start : f.end]) for f in findings]
        for index, prompt in enumerate(prompts)
        if (findings := find_personal_data(prompt))
    }
    assert flagged == {}


def test_the_corpus_is_the_same_for_a_seed() -> None:
    assert labelled_corpus(seed=7, per_kind=3) == labelled_corpus(seed=7, per_kind=3)
    assert ordinary_prompts(seed=7, count=5) == ordinary_prompts(seed=7, count=5)
    assert ordinary_prompts(seed=7, count=5) != ordinary_prompts(seed=8, count=5)
