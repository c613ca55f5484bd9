"""One recognizer per written form of a kind: a candidate pattern, the validator it must pass, and where
the check digits are too weak on their own, the context word that must stand just before it.

Every candidate is bounded by characters that cannot continue a token (``(?<![\\w-])`` ...
``(?![\\w-])``), and a digit candidate by no decimal point or thousands separator either: a run of
digits inside a hexadecimal digest, a UUID, an order number like ``ORD-2023-279230`` or a decimal
fraction is never a candidate, however well its digits check.

Recognizers that start alike form a family: the family's locator (every member's pattern in one
alternation) finds where a candidate may start in one pass, and there each member tries its own pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import validators
from .kinds import PersonalDataKind

# Before and after a candidate: not inside a word, a hyphenated code or a decimal number.
_START = r"(?<![\w-])"
_END = r"(?![\w-])"
_DIGITS_START = r"(?<![\w-])(?<!\d[.,])"
_DIGITS_END = r"(?![\w-])(?![.,]\d)"

# How far before a candidate a context word is looked for (about one short clause).
CONTEXT_WINDOW = 48


@dataclass(frozen=True, slots=True)
class Recognizer:
    """``pattern`` finds candidates of ``kind``; ``is_valid`` decides. With ``context``, a candidate
    counts only when a context word ends within :data:`CONTEXT_WINDOW` characters before it. With
    ``trim``, a candidate that fails is retried without its trailing space-separated groups (a greedy
    pattern may have taken the next word or number with it). ``min_digits`` is a cheap gate: a text
    with fewer digits is not searched, ``needs`` a character the text must hold."""

    kind: PersonalDataKind
    pattern: re.Pattern[str]
    is_valid: Callable[[str], bool]
    min_digits: int
    needs: str = ""
    context: re.Pattern[str] | None = None
    trim: bool = False


@dataclass(frozen=True, slots=True)
class Family:
    """Recognizers whose candidates start alike. ``locator`` matches where any member's pattern may."""

    members: tuple[Recognizer, ...]
    locator: re.Pattern[str]


def _family(start: str, members: tuple[tuple[PersonalDataKind, str, dict[str, object]], ...]) -> Family:
    recognizers = tuple(
        Recognizer(kind, re.compile(start + body), **options)  # type: ignore[arg-type]
        for kind, body, options in members
    )
    locator = re.compile(start + "(?:" + "|".join(f"(?:{body})" for _, body, _ in members) + ")")
    return Family(recognizers, locator)


def _words(*words: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


_PHONE_WORDS = _words(
    r"phone", r"tel", r"telephone", r"mobile", r"cell", r"fax", r"call", r"calls", r"called", r"sms",
    r"whatsapp", r"reach", r"contact", r"dial",
)  # fmt: skip
_SSN_WORDS = _words(r"ssn", r"social security(?: number| no\.?)?", r"soc\.? sec\.?")
_DE_TAX_WORDS = _words(
    r"steuer-?id(?:entifikationsnummer)?", r"steuerliche identifikationsnummer", r"idnr", r"id-nr\.?",
    r"identifikationsnummer", r"steuernummer", r"tax id(?:entification)?(?: number| no\.?)?", r"tin",
)  # fmt: skip
_BSN_WORDS = _words(r"bsn", r"burgerservicenummer", r"sofi-?nummer", r"sofi", r"citizen service number")

# Group names are unique across a family: its locator joins the members' patterns in one alternation.
DIGIT_LED = _family(
    _DIGITS_START,
    (
        (
            PersonalDataKind.PAYMENT_CARD,
            r"(?:\d{4}(?P<c1>[ -])\d{4}(?P=c1)\d{4}(?P=c1)\d{4}(?:(?P=c1)\d{1,3})?"
            r"|\d{4}(?P<c2>[ -])\d{6}(?P=c2)\d{4,5}|\d{13,19})" + _DIGITS_END,
            {"is_valid": validators.is_payment_card, "min_digits": 13},
        ),
        (
            PersonalDataKind.US_SSN,
            r"\d{3}(?P<s1>[- ])\d{2}(?P=s1)\d{4}" + _DIGITS_END,
            {"is_valid": validators.is_us_ssn, "min_digits": 9},
        ),
        (
            PersonalDataKind.US_SSN,
            r"\d{9}" + _DIGITS_END,
            {"is_valid": validators.is_us_ssn, "min_digits": 9, "context": _SSN_WORDS},
        ),
        (
            PersonalDataKind.DE_TAX_ID,
            r"(?:\d{2}(?P<d1>[ /])\d{3}(?P=d1)\d{3}(?P=d1)\d{3}|\d{11})" + _DIGITS_END,
            {"is_valid": validators.is_de_tax_id, "min_digits": 11, "context": _DE_TAX_WORDS},
        ),
        (
            PersonalDataKind.FR_NIR,
            r"[1-478] ?\d{2} ?\d{2} ?(?:\d{2}|2[AaBb]) ?\d{3} ?\d{3} ?\d{2}" + _DIGITS_END,
            {"is_valid": validators.is_fr_nir, "min_digits": 13},
        ),
        (
            PersonalDataKind.ES_DNI_NIE,
            r"\d{8}-?[A-Za-z]" + _END,
            {"is_valid": validators.is_es_dni_nie, "min_digits": 8},
        ),
        (
            PersonalDataKind.NL_BSN,
            r"(?:\d{9}|\d{4}\.\d{2}\.\d{3})" + _DIGITS_END,
            {"is_valid": validators.is_nl_bsn, "min_digits": 9, "context": _BSN_WORDS},
        ),
        (
            PersonalDataKind.PHONE,
            r"\d{3}(?P<p1>[.-])\d{3}(?P=p1)\d{4}" + _DIGITS_END,
            {"is_valid": validators.is_phone, "min_digits": 10, "context": _PHONE_WORDS},
        ),
        (
            PersonalDataKind.IP_ADDRESS,
            r"\d{1,3}(?:\.\d{1,3}){3}" + _DIGITS_END,
            {"is_valid": validators.is_ip_address, "min_digits": 4},
        ),
    ),
)

LETTER_LED = _family(
    _START,
    (
        (
            PersonalDataKind.IBAN,
            r"[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?" + _END,
            {"is_valid": validators.is_iban, "min_digits": 4, "trim": True},
        ),
        (
            PersonalDataKind.UK_NINO,
            r"[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]" + _END,
            {"is_valid": validators.is_uk_nino, "min_digits": 6},
        ),
        (
            PersonalDataKind.IT_FISCAL_CODE,
            r"[A-Za-z]{6}[\dLMNP-V]{2}[A-EHLMPR-Ta-ehlmpr-t][\dLMNP-V]{2}[A-Za-z][\dLMNP-V]{3}[A-Za-z]"
            + _END,
            {"is_valid": validators.is_it_fiscal_code, "min_digits": 0},
        ),
        (
            PersonalDataKind.ES_DNI_NIE,
            r"[XYZxyz]-?\d{7}-?[A-Za-z]" + _END,
            {"is_valid": validators.is_es_dni_nie, "min_digits": 7},
        ),
    ),
)

SIGN_LED = _family(
    r"(?<![\w+)-])",
    (
        (
            PersonalDataKind.PHONE,
            r"\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){1,6}" + _DIGITS_END,
            {"is_valid": validators.is_phone, "min_digits": 7, "needs": "+", "trim": True},
        ),
        (
            PersonalDataKind.PHONE,
            r"\(\d{3}\) ?\d{3}[ .-]\d{4}" + _DIGITS_END,
            {"is_valid": validators.is_phone, "min_digits": 10, "needs": "("},
        ),
    ),
)

IPV6 = _family(
    r"(?<![\w:.-])",
    (
        (
            PersonalDataKind.IP_ADDRESS,
            r"(?:[0-9A-Fa-f]{1,4}:){1,7}(?::|(?::[0-9A-Fa-f]{1,4}){1,7}|[0-9A-Fa-f]{1,4})(?![\w:-])(?!\.\w)",
            {"is_valid": validators.is_ip_address, "min_digits": 1, "needs": ":"},
        ),
    ),
)

FAMILIES: tuple[Family, ...] = (DIGIT_LED, LETTER_LED, SIGN_LED, IPV6)

# E-mail: a local part and a dotted domain with a letter-only top-level label. ``git@host:path`` (an
# SSH remote, not a mailbox) is not one.
EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?"
    r"@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})"
    r"(?![\w-])(?!\.[A-Za-z0-9])(?!:[\w~/])"
)
# The longest local part plus ``@`` the pattern takes: how far before an ``@`` an address may start.
EMAIL_REACH = 65

# Domains reserved for examples and tests (RFC 2606, RFC 6761): an address there belongs to nobody.
RESERVED_DOMAINS = ("example.com", "example.org", "example.net", "example", "test", "invalid", "localhost")


def is_reserved_domain(domain: str) -> bool:
    domain = domain.lower()
    return any(domain == reserved or domain.endswith("." + reserved) for reserved in RESERVED_DOMAINS)
