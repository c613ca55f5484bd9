"""Skill names in any script, as the Agent Skills reference validator reads them.

A name is NFKC-normalised (after stripping surrounding whitespace), then must be lowercase (equal to its own
``lower()``, so scripts without case pass as they are), made of letters and digits of any script
(``str.isalnum``) in runs joined by single hyphens, with no hyphen at either end. The folder a skill sits in
is compared after the same normalisation, so a folder written in decomposed form (é as e + U+0301, as some
file systems store it) still matches.

On top of the reference, a word (a run between hyphens) must not mix scripts: ``p\u0430ypal`` with a
Cyrillic ``\u0430`` reads as ``paypal`` and is refused as look-alike spoofing. The script of a letter is read from its
Unicode character name (``LATIN SMALL LETTER A``, ``CYRILLIC SMALL LETTER A``, ``CJK UNIFIED IDEOGRAPH``);
digits, marks and modifier letters belong to no script. Writing systems that combine scripts by design
count as one: Han with Hiragana and Katakana (Japanese), Han with Hangul (Korean), Han with Bopomofo.
"""

from __future__ import annotations

import re
import unicodedata

# The part of a character name before these words names its script: "OLD ITALIC LETTER A", "TAI THAM
# LETTER HIGH KA", "CANADIAN SYLLABICS E", "HANGUL SYLLABLE GA", "CJK UNIFIED IDEOGRAPH-4E00".
_SCRIPT_OF_NAME = re.compile(
    r"^(.+?) (?:(?:SMALL|CAPITAL) )?(?:LETTER|SYLLABLE|SYLLABICS|IDEOGRAPH|LIGATURE|CHARACTER)\b"
)
_NO_SCRIPT = frozenset({"MODIFIER"})
# Scripts written together by design (the augmented script sets of Unicode TS #39, section 5.1).
_WRITING_SYSTEMS = {
    "CJK UNIFIED": frozenset({"han", "japanese", "korean", "bopomofo"}),
    "CJK COMPATIBILITY": frozenset({"han", "japanese", "korean", "bopomofo"}),
    "HIRAGANA": frozenset({"japanese"}),
    "KATAKANA": frozenset({"japanese"}),
    "KATAKANA-HIRAGANA": frozenset({"japanese"}),
    "HANGUL": frozenset({"korean"}),
    "BOPOMOFO": frozenset({"bopomofo"}),
}


def normalise_name(value: str) -> str:
    """The form a name is checked and stored in: surrounding whitespace stripped, NFKC."""
    return unicodedata.normalize("NFKC", value.strip())


def normalise_folder(value: str) -> str:
    """A folder name in the form it is compared to a name in (NFKC, nothing stripped)."""
    return unicodedata.normalize("NFKC", value)


def is_well_formed(name: str) -> bool:
    """Lowercase letters and digits of any script in runs joined by single hyphens (``name`` normalised)."""
    words = name.split("-")
    return name == name.lower() and all(words) and all(char.isalnum() for word in words for char in word)


def mixed_script_word(name: str) -> str | None:
    """The first hyphen-separated word of ``name`` whose letters come from more than one script, if any."""
    for word in name.split("-"):
        shared: frozenset[str] | None = None
        for char in word:
            scripts = _scripts(char)
            if scripts is None:
                continue
            shared = scripts if shared is None else shared & scripts
            if not shared:
                return word
    return None


def _scripts(char: str) -> frozenset[str] | None:
    """The scripts a letter may be written with, or None for a character of no script (digit, mark)."""
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    match = _SCRIPT_OF_NAME.match(name)
    script = match.group(1) if match else name.split(" ", 1)[0]
    if not script or script in _NO_SCRIPT:
        return None
    return _WRITING_SYSTEMS.get(script, frozenset({script.lower()}))
