"""Skill names in every script, as the Agent Skills reference validator reads them (skills/names.py),
and the refusal of names that mix scripts within a word. Pure: no database."""

from __future__ import annotations

import unicodedata

import pytest

from skills.errors import SkillParseError
from skills.parsing import parse_skill_md


def skill(name: str) -> bytes:
    return f"---\nname: {name}\ndescription: Does things.\n---\n# Steps\n".encode()


def parse(name: str, folder: str | None) -> str:
    return parse_skill_md(skill(name), path="skills/x/SKILL.md", folder_name=folder).name


def refusal(name: str, folder: str | None = None) -> str:
    with pytest.raises(SkillParseError) as caught:
        parse(name, folder)
    return caught.value.rule.value


@pytest.mark.parametrize(
    "name",
    [
        "навык",  # Russian
        "мой-навык",
        "技能",  # Chinese
        "スキル",  # Japanese katakana
        "日本語のスキル",  # Han, hiragana and katakana together: one writing system
        "기술",  # Korean
        "한국어-技術",
        "café",
        "größe-prüfen",  # German umlauts and sharp s
        "übersicht",
        "ελληνικά",  # Greek
        "مهارة",  # Arabic
        "pdf-tools",
        "v2-навык",  # digits belong to no script; words may differ in script
        "\u0968\u0966\u0968\u096a",  # Devanagari digits
    ],
)
def test_accepts_lowercase_letters_of_any_script(name):
    assert parse(name, name) == name


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("cafe\u0301", "caf\u00e9"),  # e + combining acute composes to é
        ("\uff53\uff4b\uff49\uff4c\uff4c", "skill"),  # fullwidth letters
        ("\u2460-steps", "1-steps"),  # circled digit one
        ("ﬁle-tools", "file-tools"),  # the fi ligature
        ("x\uff0dy", "x-y"),  # fullwidth hyphen-minus
    ],
)
def test_the_name_is_nfkc_normalised_before_checks_and_stored_normalised(written, stored):
    assert parse(written, None) == stored


def test_the_folder_is_compared_after_the_same_normalisation():
    decomposed_folder = unicodedata.normalize("NFD", "café")
    assert decomposed_folder != "café"
    assert parse("café", decomposed_folder) == "café"
    assert parse(unicodedata.normalize("NFD", "größe"), "größe") == "größe"
    assert refusal("café", "cafe") == "name_folder_mismatch"


@pytest.mark.parametrize(
    "name",
    [
        "Навык",  # uppercase Cyrillic
        "Café",
        "ÜBERSICHT",
        "PDF-tools",
        "gro\u1e9ee",  # capital sharp s
        "\u01c5ab",  # titlecase dz digraph
    ],
)
def test_refuses_uppercase_in_any_script(name):
    assert refusal(name) == "name_invalid"


@pytest.mark.parametrize(
    "name",
    [
        "мой--навык",
        "-навык",
        "навык-",
        "навык_1",
        "на вык",
        "½-tools",  # NFKC gives 1, U+2044, 2: the fraction slash is no letter
        "caf\u0301",  # a combining mark with nothing to compose with
    ],
)
def test_refuses_what_the_reference_refuses(name):
    assert refusal(f"'{name}'") == "name_invalid"


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("p\u0430ypal", "p\u0430ypal"),  # Cyrillic a (U+0430) in a Latin word
        ("\u0430pple-tools", "\u0430pple"),
        ("pdf-t\u043e\u043els", "t\u043e\u043els"),  # Cyrillic o (U+043E) twice, second word
        ("\u043d\u0430\u0432\u044bk", "\u043d\u0430\u0432\u044bk"),  # Latin k in a Cyrillic word
        ("\u03b1lpha", "\u03b1lpha"),  # Greek alpha in a Latin word
        ("abc技能", "abc技能"),  # Latin and Han in one word
    ],
)
def test_refuses_a_word_that_mixes_scripts_and_names_it(name, word):
    with pytest.raises(SkillParseError) as caught:
        parse(name, None)
    assert caught.value.rule.value == "name_mixed_script"
    assert f"in the word {word!r}" in caught.value.message


def test_the_length_limit_counts_characters_after_normalisation():
    assert parse("я" * 64, None) == "я" * 64
    assert refusal("я" * 65) == "name_too_long"
    assert refusal("\ufb01" * 33) == "name_too_long"  # 33 ligatures become 66 letters


def test_unknown_front_matter_fields_stay_accepted_and_kept():
    raw = "---\nname: навык\ndescription: Does things.\nauthor: Аня\nversion: 2\n---\n".encode()
    parsed = parse_skill_md(raw, path="skills/навык/SKILL.md", folder_name="навык")
    assert parsed.extra_front_matter == {"author": "Аня", "version": 2}
    assert parsed.unknown_keys == ("author", "version")
    assert parsed.warnings == ("unknown_keys", "body_empty")
