"""The kept validators a candidate must pass to be a finding: check digits from python-stdnum, the
numbering plans of ``phonenumbers``, the address registry of the standard library's ``ipaddress``.

Each takes the candidate as it stands in the text (separators included) and says whether it is one.
None raises: a value a library cannot read is not a finding of that kind.
"""

from __future__ import annotations

import ipaddress
import re

import phonenumbers
from stdnum import iban, luhn
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.us import ssn

_SEPARATORS = re.compile(r"[\s./-]")


def _compact(candidate: str) -> str:
    return _SEPARATORS.sub("", candidate).upper()


def is_payment_card(candidate: str) -> bool:
    """A known issuer's prefix at a length it issues, and the Luhn check digit: Luhn alone passes one
    random digit run in ten."""
    number = _compact(candidate)
    return _issued_length(number) and luhn.is_valid(number)


def _issued_length(number: str) -> bool:
    length, two, four = len(number), int(number[:2]), int(number[:4])
    if number[0] == "4":  # Visa
        return length in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:  # Mastercard, both series
        return length == 16
    if two in (34, 37):  # American Express
        return length == 15
    if four == 6011 or two == 65 or 644 <= int(number[:3]) <= 649 or two == 62:  # Discover, UnionPay
        return 16 <= length <= 19
    if 3528 <= four <= 3589:  # JCB
        return 16 <= length <= 19
    if two in (36, 38, 39) or 300 <= int(number[:3]) <= 305:  # Diners Club
        return length in (14, 16)
    return False


def is_iban(candidate: str) -> bool:
    """ISO 13616: the country's length and layout, mod 97, and the national check where stdnum has one."""
    return iban.is_valid(_compact(candidate))


def is_us_ssn(candidate: str) -> bool:
    """Area, group and serial as the SSA issues them (no 000, 666 or 9xx area, no 00 group, no 0000
    serial, no advertised sample numbers): an SSN has no check digit."""
    if len(set(_SEPARATORS.findall(candidate))) > 1:  # mixed separators are not how anyone writes one
        return False
    return ssn.is_valid(_compact(candidate))


# UK National Insurance number: no D, F, I, Q, U or V in the prefix, no O second, never these pairs.
_NINO_REFUSED_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def is_uk_nino(candidate: str) -> bool:
    """The prefix rules of HMRC (the letters are in the candidate pattern; here the refused pairs).
    A NINO has no check digit: its shape is all there is, so the pattern is strict."""
    return _compact(candidate)[:2] not in _NINO_REFUSED_PREFIXES


def is_de_tax_id(candidate: str) -> bool:
    """Steuerliche Identifikationsnummer: eleven digits, one digit repeated in the first ten, ISO 7064
    mod 11,10."""
    return idnr.is_valid(_compact(candidate))


def is_fr_nir(candidate: str) -> bool:
    """NIR (numéro de sécurité sociale): sex digit, birth month 01-12 or the 20+ codes INSEE uses when
    the month is unknown, and the mod 97 key."""
    number = _compact(candidate)
    if number[:1] not in ("1", "2", "3", "4", "7", "8"):
        return False
    month = int(number[3:5]) if number[3:5].isdigit() else 0
    return (1 <= month <= 12 or month >= 20) and nir.is_valid(number)


def is_it_fiscal_code(candidate: str) -> bool:
    """Codice fiscale: layout (including the letters that stand for digits), a real birth date, and the
    check letter."""
    number = _compact(candidate)
    return len(number) == 16 and codicefiscale.is_valid(number)


def is_es_dni_nie(candidate: str) -> bool:
    """DNI (eight digits) or NIE (X, Y or Z and seven digits), each with its mod 23 check letter."""
    number = _compact(candidate)
    return (nie if number[0] in "XYZ" else dni).is_valid(number)


def is_nl_bsn(candidate: str) -> bool:
    """Burgerservicenummer: nine digits and the eleven-test. One random nine-digit number in eleven
    passes, so the recognizer also asks for a context word."""
    return bsn.is_valid(_compact(candidate))


def is_phone(candidate: str) -> bool:
    """A number ``phonenumbers`` parses (national forms read as US) and finds valid for its numbering
    plan: its length and its area or mobile prefixes."""
    try:
        number = phonenumbers.parse(candidate, "US")
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number)


def is_ip_address(candidate: str) -> bool:
    """A globally routable address, the only kind that can point at a subscriber: private, loopback,
    link-local, shared, documentation, reserved and multicast ranges identify nobody outside their
    network. A dotted quad whose four parts are all single digits reads as a version (``1.2.3.4``),
    and is not taken for an address."""
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return False
    if address.version == 4 and all(len(part) == 1 for part in candidate.split(".")):
        return False
    return address.is_global and not address.is_multicast
