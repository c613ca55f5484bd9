"""Personal-data detection: which spans of a text hold personal data, and of what kind.

Contract of :func:`find_personal_data`:

- a finding is a kind and a span of the text, never the value (``repr`` and ``str`` show no value);
- a built-in kind is found only when a kept library validates it: check digits from python-stdnum
  (cards by issuer prefix, length and Luhn; IBAN; US SSN; DE tax id; FR NIR; IT fiscal code; ES
  DNI/NIE; NL BSN), numbering plans from ``phonenumbers``, globally routable addresses from
  ``ipaddress``; UK NINO and e-mail by their strict shape (neither has a check digit);
- where check digits pass too many random numbers (NL BSN, DE tax id, a US SSN or phone number written
  as bare digits), a context word must stand just before the value;
- operator patterns (:class:`OperatorPattern`) add ``custom`` findings, unvalidated;
- pure: no Django, no I/O, no state. The cost is a few regexes per kind over the text, gated by what
  every match needs; a 4 KB prompt takes well under a millisecond (``bench/personal_data.py``).

Personal data is found here, never declared. What a send does with a finding (the class it raises a
part to, the receipt that names kinds and counts) belongs to the callers (decision 0032).
"""

from __future__ import annotations

from .detect import find_personal_data
from .kinds import Finding, OperatorPattern, PersonalDataKind, summary

__all__ = ["Finding", "OperatorPattern", "PersonalDataKind", "find_personal_data", "summary"]
