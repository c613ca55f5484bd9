"""Valid personal-data values of every kind, drawn from a seeded random generator with their check
digits computed (nobody's real data), each in one of the ways people write it; and near misses: the
same values with a wrong check digit, or a shape nobody is issued.

Every valid value is accepted by the kept library that judges its kind (python-stdnum, phonenumbers,
ipaddress); the tests prove it rather than trust it.
"""

from __future__ import annotations

import ipaddress
import random
import string
from collections.abc import Callable

import phonenumbers
from stdnum import iban, luhn
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.us import ssn

from governance.guardrails.personal_data import PersonalDataKind

Draw = Callable[[random.Random], str]

_FIRST = ["anna", "marco", "lea", "jonas", "chloe", "diego", "priya", "liam", "sofia", "noah", "emma"]
_LAST = ["schmidt", "rossi", "dubois", "garcia", "jansen", "smith", "kowalski", "novak", "muller"]
_DOMAINS = ["gmail.com", "outlook.de", "acme-corp.co.uk", "mail.fabrikam.eu", "posteo.net", "web.de"]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _group(value: str, sizes: tuple[int, ...], sep: str) -> str:
    parts, at = [], 0
    for size in sizes:
        parts.append(value[at : at + size])
        at += size
    if at < len(value):
        parts.append(value[at:])
    return sep.join(part for part in parts if part)


def email(rng: random.Random) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randrange(99)}", first])
    return f"{local}@{rng.choice(_DOMAINS)}"


_PHONE_REGIONS = ["US", "GB", "DE", "FR", "IT", "ES", "NL", "CH", "AT", "BE", "SE", "PL", "IE", "AU"]


def phone(rng: random.Random) -> str:
    while True:
        region = rng.choice(_PHONE_REGIONS)
        kind = rng.choice([phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE])
        example = str(phonenumbers.example_number_for_type(region, kind).national_number)
        keep = max(2, len(example) - 6)
        number = phonenumbers.parse(
            f"+{phonenumbers.country_code_for_region(region)}"
            f"{example[:keep]}{_digits(rng, len(example) - keep)}"
        )
        if not phonenumbers.is_valid_number(number):
            continue
        written = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
        if region == "US" and rng.random() < 0.5:
            return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
        return rng.choice([written, written.replace(" ", "-"), written.replace(" ", "", 1)])


_CARD_PREFIXES = [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16), ("34", 15), ("37", 15),
                  ("6011", 16), ("65", 16), ("3530", 16), ("4", 13), ("36", 14), ("62", 19)]  # fmt: skip


def payment_card(rng: random.Random) -> str:
    prefix, length = rng.choice(_CARD_PREFIXES)
    body = prefix + _digits(rng, length - len(prefix) - 1)
    number = body + luhn.calc_check_digit(body)
    if length == 15:
        return _group(number, (4, 6, 5), rng.choice([" ", "-", ""]))
    if length == 16:
        return _group(number, (4, 4, 4, 4), rng.choice([" ", "-", ""]))
    return number


_BBAN = {  # country: layout of the basic bank account number (n digit, a letter, c either)
    "DE": "18n", "FR": "10n11c2n", "GB": "4a14n", "ES": "20n", "IT": "1a10n12c", "NL": "4a10n",
    "BE": "12n", "AT": "16n", "CH": "5n12c", "PL": "24n", "IE": "4a14n", "PT": "21n",
}  # fmt: skip


def _bban(rng: random.Random, layout: str) -> str:
    out, count = [], ""
    alphabets = {"n": string.digits, "a": string.ascii_uppercase, "c": string.digits + string.ascii_uppercase}
    for char in layout:
        if char.isdigit():
            count += char
        else:
            out.append("".join(rng.choice(alphabets[char]) for _ in range(int(count))))
            count = ""
    return "".join(out)


def iban_number(rng: random.Random) -> str:
    while True:
        country = rng.choice(sorted(_BBAN))
        bban = _bban(rng, _BBAN[country])
        number = country + iban.calc_check_digits(country + "00" + bban) + bban
        if iban.is_valid(number):
            break
    grouped = " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    return rng.choice([grouped, number, grouped, grouped.lower()])


def us_ssn(rng: random.Random) -> str:
    while True:
        area = rng.choice([rng.randrange(1, 666), rng.randrange(667, 900)])
        number = f"{area:03d}{rng.randrange(1, 100):02d}{rng.randrange(1, 10000):04d}"
        if ssn.is_valid(number):
            return rng.choice(
                [f"{number[:3]}-{number[3:5]}-{number[5:]}"] * 3
                + [f"{number[:3]} {number[3:5]} {number[5:]}"]
            )


_NINO_FIRST = "ABCEGHJKLMNOPRSTWXYZ"
_NINO_SECOND = "ABCEGHJKLMNPRSTWXYZ"


def uk_nino(rng: random.Random) -> str:
    while True:
        prefix = rng.choice(_NINO_FIRST) + rng.choice(_NINO_SECOND)
        if prefix not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}:
            break
    body, suffix = _digits(rng, 6), rng.choice("ABCD")
    return rng.choice([f"{prefix}{body}{suffix}", f"{prefix} {body[:2]} {body[2:4]} {body[4:]} {suffix}"])


def de_tax_id(rng: random.Random) -> str:
    while True:
        digits = list(rng.sample(string.digits[1:], 1) + rng.sample(string.digits, 9))
        digits[rng.randrange(1, 10)] = digits[rng.randrange(0, 10)]
        first = "".join(digits)
        number = first + idnr.mod_11_10.calc_check_digit(first)
        if idnr.is_valid(number):
            return rng.choice([number, f"{number[:2]} {number[2:5]} {number[5:8]} {number[8:]}"])


def fr_nir(rng: random.Random) -> str:
    first = (
        f"{rng.choice('12')}{rng.randrange(100):02d}{rng.randrange(1, 13):02d}"
        f"{rng.randrange(1, 96):02d}{rng.randrange(1, 990):03d}{rng.randrange(1, 1000):03d}"
    )
    number = f"{first}{97 - int(first) % 97:02d}"
    spaced = " ".join(
        [number[0], number[1:3], number[3:5], number[5:7], number[7:10], number[10:13], number[13:]]
    )
    return rng.choice([number, spaced])


_MONTHS = "ABCDEHLMPRST"


def it_fiscal_code(rng: random.Random) -> str:
    while True:
        letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(6))
        day = rng.randrange(1, 29) + rng.choice([0, 40])
        place = rng.choice("ABCDEFGHILMZ") + f"{rng.randrange(1, 1000):03d}"
        body = f"{letters}{rng.randrange(100):02d}{rng.choice(_MONTHS)}{day:02d}{place}"
        number = body + codicefiscale.calc_check_digit(body)
        if codicefiscale.is_valid(number):
            return number


def es_dni_nie(rng: random.Random) -> str:
    if rng.random() < 0.5:
        body = _digits(rng, 8)
        return rng.choice([f"{body}{dni.calc_check_digit(body)}", f"{body}-{dni.calc_check_digit(body)}"])
    body = rng.choice("XYZ") + _digits(rng, 7)
    return f"{body}{nie.calc_check_digit(body)}"


def nl_bsn(rng: random.Random) -> str:
    while True:
        number = str(rng.randrange(10_000_000, 999_999_999)).zfill(9)
        if bsn.is_valid(number):
            return rng.choice([number, number, f"{number[:4]}.{number[4:6]}.{number[6:]}"])


def ip_address(rng: random.Random) -> str:
    while True:
        if rng.random() < 0.7:
            candidate = ".".join(str(rng.randrange(256)) for _ in range(4))
        else:
            groups = [f"{rng.randrange(0x2001, 0x2C00):x}"] + [
                f"{rng.randrange(0x10000):x}" for _ in range(7)
            ]
            candidate = str(ipaddress.IPv6Address(":".join(groups)))
        address = ipaddress.ip_address(candidate)
        single_digits = address.version == 4 and all(len(part) == 1 for part in candidate.split("."))
        if address.is_global and not address.is_multicast and not single_digits:
            return candidate


VALUES: dict[PersonalDataKind, Draw] = {
    PersonalDataKind.EMAIL: email,
    PersonalDataKind.PHONE: phone,
    PersonalDataKind.PAYMENT_CARD: payment_card,
    PersonalDataKind.IBAN: iban_number,
    PersonalDataKind.US_SSN: us_ssn,
    PersonalDataKind.UK_NINO: uk_nino,
    PersonalDataKind.DE_TAX_ID: de_tax_id,
    PersonalDataKind.FR_NIR: fr_nir,
    PersonalDataKind.IT_FISCAL_CODE: it_fiscal_code,
    PersonalDataKind.ES_DNI_NIE: es_dni_nie,
    PersonalDataKind.NL_BSN: nl_bsn,
    PersonalDataKind.IP_ADDRESS: ip_address,
}


def wrong_check_digit(kind: PersonalDataKind, value: str) -> str:
    """``value`` with its check character replaced by another: for the kinds that have one, no longer
    a valid value (the tests prove it with the library)."""
    at = _CHECK_POSITION[kind](value)
    old = value[at]
    if old.isdigit():
        new = str((int(old) + 1) % 10)
    else:
        new = "A" if old.upper() != "A" else "B"
        new = new if old.isupper() else new.lower()
    return value[:at] + new + value[at + 1 :]


def _last_alnum(value: str) -> int:
    return max(i for i, char in enumerate(value) if char.isalnum())


_CHECK_POSITION: dict[PersonalDataKind, Callable[[str], int]] = {
    PersonalDataKind.PAYMENT_CARD: _last_alnum,
    PersonalDataKind.IBAN: lambda value: 2,  # the first of the two check digits
    PersonalDataKind.DE_TAX_ID: _last_alnum,
    PersonalDataKind.FR_NIR: _last_alnum,
    PersonalDataKind.IT_FISCAL_CODE: _last_alnum,
    PersonalDataKind.ES_DNI_NIE: _last_alnum,
    PersonalDataKind.NL_BSN: _last_alnum,
}
CHECKED_KINDS = frozenset(_CHECK_POSITION)
