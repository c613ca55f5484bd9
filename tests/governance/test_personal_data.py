"""Personal-data detection, kind by kind: the exact kind and span of a valid value, nothing for a wrong
check digit or an address that identifies nobody, context words where check digits are weak, values
never in a finding's repr, operator patterns, and the summary a receipt shows."""

from __future__ import annotations

import random
import re

import pytest

from governance.guardrails.personal_data import (
    Finding,
    OperatorPattern,
    PersonalDataKind,
    find_personal_data,
    summary,
)
from tests.personal_data_corpus import labelled
from tests.personal_data_corpus.values import CHECKED_KINDS, VALUES, wrong_check_digit

K = PersonalDataKind


def spans(text: str, **options) -> list[tuple[str, str]]:
    return [(f.kind.value, text[f.start : f.end]) for f in find_personal_data(text, **options)]


@pytest.mark.parametrize("kind", list(VALUES), ids=str)
def test_finds_every_kind_with_its_exact_span(kind: PersonalDataKind) -> None:
    rng = random.Random(f"span-{kind}")
    for _ in range(20):
        case = labelled(kind, VALUES[kind](rng), "Record for the file ({v}), see above.")
        if kind in (K.NL_BSN, K.DE_TAX_ID):
            case = labelled(kind, case.value, {K.NL_BSN: "BSN: {v}.", K.DE_TAX_ID: "Steuer-ID {v}."}[kind])
        assert find_personal_data(case.text) == (Finding(kind, case.start, case.end),), case.value


@pytest.mark.parametrize("kind", sorted(CHECKED_KINDS), ids=str)
def test_a_wrong_check_digit_is_not_found(kind: PersonalDataKind) -> None:
    rng = random.Random(f"wrong-{kind}")
    template = {K.NL_BSN: "BSN: {v}.", K.DE_TAX_ID: "Steuer-ID {v}."}.get(kind, "On file: {v}.")
    for _ in range(20):
        valid = labelled(kind, VALUES[kind](rng), template)
        assert find_personal_data(valid.text) != ()  # the same sentence, valid, is found
        case = labelled(kind, wrong_check_digit(kind, valid.value), template)
        assert [f for f in find_personal_data(case.text) if f.kind == kind] == [], case.value


def test_values_written_as_people_write_them() -> None:
    text = (
        "Mail jane.doe@gmail.com or call +44 20 7946 0958 / (415) 734-5521; card 4111 1111 1111 1111;"
        " IBAN DE89 3704 0044 0532 0130 00; SSN 536-90-4399; NINO AB 12 34 56 C; CF RSSMRA85T10A562S;"
        " DNI 12345678Z, NIE X1234567L; Steuer-ID 86095742719; BSN 111222333; from 52.14.22.1."
    )
    assert spans(text) == [
        ("email", "jane.doe@gmail.com"),
        ("phone", "+44 20 7946 0958"),
        ("phone", "(415) 734-5521"),
        ("payment_card", "4111 1111 1111 1111"),
        ("iban", "DE89 3704 0044 0532 0130 00"),
        ("us_ssn", "536-90-4399"),
        ("uk_nino", "AB 12 34 56 C"),
        ("it_fiscal_code", "RSSMRA85T10A562S"),
        ("es_dni_nie", "12345678Z"),
        ("es_dni_nie", "X1234567L"),
        ("de_tax_id", "86095742719"),
        ("nl_bsn", "111222333"),
        ("ip_address", "52.14.22.1"),
    ]


def test_weak_checksums_need_a_context_word() -> None:
    assert spans("reference 111222333 and 86095742719 and 536904399") == []
    assert spans("BSN 111222333") == [("nl_bsn", "111222333")]
    assert spans("tax id 86095742719") == [("de_tax_id", "86095742719")]
    assert spans("SSN 536904399") == [("us_ssn", "536904399")]
    assert spans("part 415-734-5521") == []
    assert spans("call me on 415-734-5521") == [("phone", "415-734-5521")]


def test_a_context_word_farther_than_a_clause_does_not_count() -> None:
    assert spans("BSN" + " filler" * 10 + " 111222333") == []


def test_addresses_that_identify_nobody_are_not_found() -> None:
    text = (
        "bind 10.0.0.5, 192.168.1.20, 172.16.4.1, 127.0.0.1, 0.0.0.0, 203.0.113.7 (docs), 100.64.0.9,"
        " 224.0.0.251, ::1, fe80::1ff:fe23:4567:890a, 2001:db8::8a2e:370:7334; firmware 1.2.3.4"
    )
    assert spans(text) == []
    assert spans("from 2a00:1450:4001:81c::200e.") == [("ip_address", "2a00:1450:4001:81c::200e")]


def test_reserved_domains_and_ssh_remotes_are_not_mailboxes() -> None:
    text = "alice@example.com, bob@mail.example.org, ci@build.test, git@github.com:team/service.git"
    assert spans(text) == []
    assert spans("ping dev@github.com today") == [("email", "dev@github.com")]


def test_digits_inside_longer_tokens_are_never_candidates() -> None:
    luhn_valid = "4111111111111111"
    text = (
        f"sha {'ab' * 8}{luhn_valid}{'cd' * 8} order ORD-{luhn_valid} v{luhn_valid} {luhn_valid}.5"
        f" 0.{luhn_valid} {luhn_valid}-2"
    )
    assert spans(text) == []
    assert spans(f"card {luhn_valid}.") == [("payment_card", luhn_valid)]


def test_a_trailing_number_does_not_hide_a_value() -> None:
    assert spans("IBAN DE89 3704 0044 0532 0130 00 1234 due") == [("iban", "DE89 3704 0044 0532 0130 00")]
    assert spans("call +44 20 7946 0958 2023") == [("phone", "+44 20 7946 0958")]


def test_kinds_limits_the_search() -> None:
    text = "jane.doe@gmail.com 536-90-4399 52.14.22.1"
    assert spans(text, kinds=frozenset({K.US_SSN})) == [("us_ssn", "536-90-4399")]
    assert spans(text, kinds=frozenset()) == []


def test_operator_patterns_add_custom_findings_named_by_the_pattern() -> None:
    employee = OperatorPattern("employee_id", re.compile(r"\bEMP-\d{6}\b"))
    empty = OperatorPattern("matches_nothing_visible", re.compile(r"x*"))
    text = "EMP-004211 wrote from jane.doe@gmail.com about EMP-000017."
    findings = find_personal_data(text, extra_patterns=(employee, empty))
    assert findings == (
        Finding(K.CUSTOM, 0, 10, "employee_id"),
        Finding(K.EMAIL, 22, 40),
        Finding(K.CUSTOM, 47, 57, "employee_id"),
    )
    assert "EMP-" not in repr(employee)


def test_of_overlapping_findings_the_longer_is_kept() -> None:
    whole = OperatorPattern("whole_line", re.compile(r"SSN \S+"))
    assert spans("SSN 536-90-4399", extra_patterns=(whole,)) == [("custom", "SSN 536-90-4399")]


def test_no_value_reaches_a_findings_repr_or_str() -> None:
    rng = random.Random("repr")
    for kind, draw in VALUES.items():
        value = draw(rng)
        context = {K.NL_BSN: "BSN ", K.DE_TAX_ID: "IdNr "}.get(kind, "")
        findings = find_personal_data(f"{context}{value} ")
        assert findings, kind
        compact = re.sub(r"[\s.-]", "", value)
        for shown in (repr(findings), str(findings), repr(summary(findings))):
            assert value not in shown and compact not in shown


def test_summary_counts_by_kind_in_kind_order() -> None:
    text = "52.14.22.1, jane@gmail.com, 52.14.22.2, SSN 536-90-4399, bob@posteo.net"
    assert summary(find_personal_data(text)) == {K.EMAIL: 2, K.US_SSN: 1, K.IP_ADDRESS: 2}
    assert list(summary(find_personal_data(text))) == [K.EMAIL, K.US_SSN, K.IP_ADDRESS]
    assert summary(()) == {}


def test_kind_values_are_stable() -> None:
    assert [kind.value for kind in PersonalDataKind] == [
        "email", "phone", "payment_card", "iban", "us_ssn", "uk_nino", "de_tax_id", "fr_nir",
        "it_fiscal_code", "es_dni_nie", "nl_bsn", "ip_address", "custom",
    ]  # fmt: skip
