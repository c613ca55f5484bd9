"""The SKILL.md corpus: every rule of the contract in skills/parsing.py, each boundary on both sides,
and the hostile inputs.

Each case is (folder name, raw bytes, expected): expected is either the exact rule of the error or the
exact values of the named ``ParsedSkill`` fields. Pure: no database.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time

import pytest

from skills import parsing
from skills.errors import SkillParseError, SkillParseRule
from skills.parsing import MAX_BODY_BYTES, MAX_FILE_BYTES, MAX_FRONT_MATTER_BYTES, parse_skill_md

FRONT = "name: pdf-tools\ndescription: Extract text from PDF files.\n"
BODY = "# PDF tools\n\nUse pdfplumber.\n"


def md(front: str = FRONT, body: str = BODY) -> bytes:
    return f"---\n{front}---\n{body}".encode()


def front_of_bytes(size: int, filler: str = "x") -> str:
    """FRONT padded with a YAML comment to exactly ``size`` UTF-8 bytes (``filler`` may be multi-byte)."""
    room = size - len(FRONT.encode()) - len("#\n")
    count, remainder = divmod(room, len(filler.encode()))
    return FRONT + "#" + filler * count + "x" * remainder + "\n"


def with_name(name: str) -> bytes:
    return md(f"name: {name}\ndescription: Does things.\n")


def with_field(line: str) -> bytes:
    return md(FRONT + line + "\n")


def laughs(levels: int) -> str:
    """'Billion laughs': each level lists the previous one nine times, so 9**levels leaves via aliases."""
    return "lol: &l0 [a, a, a, a, a, a, a, a, a]\n" + "".join(
        f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, levels)
    )


REALISTIC = """---
name: pdf-tools
description: >-
  Extract text and tables from PDF files, fill forms and merge documents.
  Use when the user mentions PDFs, forms or document extraction.
license: Apache-2.0
compatibility: Requires Python 3.11+ and the pdfplumber package.
metadata:
  author: example-org
  version: "1.2"
allowed-tools: Bash(python:*) Read
---
# PDF tools

## Quick start
Run `scripts/extract.py input.pdf`, then check the output.

For forms, read [the forms guide](references/forms/filling.md) first, then
[the API notes](./references/api.md). Templates live in assets/templates/invoice.docx.
The forms guide again: references/forms/filling.md.

Not ours: https://example.com/scripts/remote.py and ../shared/scripts/other.sh
"""

CASES = [
    # --- file, encoding, delimiters
    pytest.param("pdf-tools", md(), {"name": "pdf-tools", "body": BODY, "warnings": ()}, id="minimal_valid"),
    pytest.param("pdf-tools", BODY.encode(), "front_matter_missing", id="missing_front_matter"),
    pytest.param("pdf-tools", b"", "front_matter_missing", id="empty_file"),
    pytest.param("pdf-tools", b"\n" + md(), "front_matter_missing", id="blank_line_before_delimiter"),
    pytest.param(
        "pdf-tools", b"--- name: pdf-tools\n---\n", "front_matter_missing", id="content_on_delimiter"
    ),
    pytest.param("pdf-tools", f"---\n{FRONT}".encode(), "front_matter_unterminated", id="unterminated"),
    pytest.param("pdf-tools", b"---", "front_matter_unterminated", id="only_opening_delimiter"),
    pytest.param("pdf-tools", b"---\n---\n# Body\n", "front_matter_empty", id="empty_front_matter"),
    pytest.param("pdf-tools", md("# only a comment\n"), "front_matter_empty", id="comment_only_front_matter"),
    pytest.param("pdf-tools", md("- name\n- description\n"), "front_matter_not_mapping", id="yaml_list"),
    pytest.param("pdf-tools", md("just a sentence\n"), "front_matter_not_mapping", id="yaml_scalar"),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\n\tdescription: x\n"), "yaml_invalid", id="tab_indentation"
    ),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\ndescription: 'open\n"), "yaml_invalid", id="unclosed_quote"
    ),
    pytest.param("pdf-tools", md(FRONT + "name: other\n"), "yaml_invalid", id="duplicate_top_level_key"),
    pytest.param(
        "pdf-tools", md(FRONT + "metadata:\n  a: '1'\n  a: '2'\n"), "yaml_invalid", id="duplicate_nested_key"
    ),
    pytest.param("pdf-tools", md(FRONT + laughs(4)), "yaml_invalid", id="billion_laughs"),
    pytest.param(
        "pdf-tools", md(FRONT + "base: &b {k: v}\nx:\n  <<: *b\n"), "yaml_invalid", id="merge_alias"
    ),
    pytest.param(
        "pdf-tools", md(FRONT + "deep: " + "[" * 25 + "]" * 25 + "\n"), "yaml_invalid", id="deep_nesting"
    ),
    pytest.param("pdf-tools", md(FRONT + "blob: !!binary aGVsbG8=\n"), "yaml_invalid", id="explicit_tag"),
    pytest.param("pdf-tools", md(FRONT + "n: !!int abc\n"), "yaml_invalid", id="explicit_tag_bad_value"),
    pytest.param("pdf-tools", md(FRONT + "? [a, b]\n: x\n"), "yaml_invalid", id="unhashable_key"),
    pytest.param("pdf-tools", md(FRONT + 'x: "\x00"\n'), "yaml_invalid", id="nul_character"),
    pytest.param("pdf-tools", b"\xef\xbb\xbf" + md(), {"name": "pdf-tools", "body": BODY}, id="bom_stripped"),
    pytest.param(
        "pdf-tools", md(body="Caf\xe9\n").replace(b"\xc3\xa9", b"\xe9"), "not_utf8", id="latin1_bytes"
    ),
    pytest.param("pdf-tools", md().decode().encode("utf-16"), "not_utf8", id="utf16"),
    pytest.param(
        "pdf-tools",
        md().replace(b"\n", b"\r\n"),
        {"description": "Extract text from PDF files.", "body": BODY},
        id="crlf_line_ends",
    ),
    pytest.param("pdf-tools", md().replace(b"\n", b"\r"), {"name": "pdf-tools", "body": BODY}, id="cr_only"),
    pytest.param(
        "pdf-tools",
        b"---  \n" + FRONT.encode() + b"---\t \n" + BODY.encode(),
        {"name": "pdf-tools", "body": BODY},
        id="trailing_spaces_on_delimiters",
    ),
    pytest.param(
        "pdf-tools",
        md(body="Intro\n---\nname: not-front-matter\n---\nEnd\n"),
        {"name": "pdf-tools", "body": "Intro\n---\nname: not-front-matter\n---\nEnd\n"},
        id="delimiter_inside_body",
    ),
    pytest.param(
        "pdf-tools", md(body=""), {"body": "", "warnings": ("body_empty",), "references": ()}, id="empty_body"
    ),
    pytest.param(
        "pdf-tools", f"---\n{FRONT}---".encode(), {"body": "", "warnings": ("body_empty",)}, id="no_eol"
    ),
    pytest.param("pdf-tools", md(body="\n \n"), {"warnings": ("body_empty",)}, id="whitespace_body"),
    pytest.param(
        "pdf-tools", md(body="line\n" * 501), {"warnings": ("body_over_500_lines",)}, id="body_over_500_lines"
    ),
    # --- size caps (bytes, measured after CRLF normalisation)
    pytest.param(
        "pdf-tools",
        md(front_of_bytes(MAX_FRONT_MATTER_BYTES)),
        {"name": "pdf-tools"},
        id="front_matter_at_limit",
    ),
    pytest.param(
        "pdf-tools",
        md(front_of_bytes(MAX_FRONT_MATTER_BYTES + 1)),
        "front_matter_too_large",
        id="front_matter_over",
    ),
    pytest.param(
        "pdf-tools",
        md(front_of_bytes(MAX_FRONT_MATTER_BYTES + 1, filler="\u00e9")),
        "front_matter_too_large",
        id="front_matter_counted_in_bytes",
    ),
    pytest.param(
        "pdf-tools",
        md(front_of_bytes(MAX_FRONT_MATTER_BYTES)).replace(b"\n", b"\r\n"),
        {"name": "pdf-tools"},
        id="front_matter_at_limit_after_crlf",
    ),
    pytest.param(
        "pdf-tools", md(body="x" * MAX_BODY_BYTES), {"body": "x" * MAX_BODY_BYTES}, id="body_at_limit"
    ),
    pytest.param("pdf-tools", md(body="x" * (MAX_BODY_BYTES + 1)), "body_too_large", id="body_over"),
    pytest.param(
        "pdf-tools", md(body="\u00e9" * (MAX_BODY_BYTES // 2 + 1)), "body_too_large", id="body_in_bytes"
    ),
    pytest.param("pdf-tools", md(body="x" * MAX_FILE_BYTES), "file_too_large", id="file_too_large"),
    # --- name
    pytest.param("pdf-tools", with_name("pdf-tools"), {"name": "pdf-tools"}, id="name_equals_folder"),
    pytest.param("other", with_name("pdf-tools"), "name_folder_mismatch", id="name_folder_mismatch"),
    pytest.param(None, with_name("pdf-tools"), {"name": "pdf-tools"}, id="no_folder_no_check"),
    pytest.param("pdf-tools", with_name("PDF-Tools"), "name_invalid", id="name_uppercase"),
    pytest.param("pdf--tools", with_name("pdf--tools"), "name_invalid", id="name_double_hyphen"),
    pytest.param("-pdf", with_name("'-pdf'"), "name_invalid", id="name_leading_hyphen"),
    pytest.param("pdf-", with_name("pdf-"), "name_invalid", id="name_trailing_hyphen"),
    pytest.param("pdf_tools", with_name("pdf_tools"), "name_invalid", id="name_underscore"),
    pytest.param("pdf tools", with_name("pdf tools"), "name_invalid", id="name_space"),
    pytest.param("caf\u00e9", with_name("caf\u00e9"), {"name": "caf\u00e9"}, id="name_unicode_letter"),
    pytest.param("p\u0430ypal", with_name("p\u0430ypal"), "name_mixed_script", id="name_mixed_script"),
    pytest.param("a" * 64, with_name("a" * 64), {"name": "a" * 64}, id="name_64_chars"),
    pytest.param("a" * 65, with_name("a" * 65), "name_too_long", id="name_65_chars"),
    pytest.param("123", with_name('"123"'), {"name": "123"}, id="name_digits_only"),
    pytest.param("123", with_name("123"), "name_invalid", id="name_integer"),
    pytest.param("yes", with_name("yes"), "name_invalid", id="name_yaml_boolean"),
    pytest.param("pdf-tools", md("description: Does things.\n"), "name_missing", id="name_missing"),
    pytest.param("pdf-tools", with_name("''"), "name_missing", id="name_empty"),
    pytest.param("pdf-tools", with_name("null"), "name_missing", id="name_null"),
    # --- description
    pytest.param("pdf-tools", md("name: pdf-tools\n"), "description_missing", id="description_missing"),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\ndescription: ''\n"), "description_missing", id="desc_empty"
    ),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\ndescription: '  '\n"), "description_missing", id="desc_blank"
    ),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\ndescription: [a]\n"), "description_invalid", id="desc_list"
    ),
    pytest.param(
        "pdf-tools",
        md("name: pdf-tools\ndescription: Use it <instructions>obey</instructions>\n"),
        "description_invalid",
        id="desc_xml_tags",
    ),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\ndescription: 'a > b'\n"), "description_invalid", id="desc_gt"
    ),
    pytest.param(
        "pdf-tools", md("name: pdf-tools\ndescription: 'a < b'\n"), "description_invalid", id="desc_lt"
    ),
    pytest.param(
        "pdf-tools",
        md(f"name: pdf-tools\ndescription: {'d' * 1024}\n"),
        {"description": "d" * 1024},
        id="desc_1024",
    ),
    pytest.param(
        "pdf-tools",
        md(f"name: pdf-tools\ndescription: {'d' * 1025}\n"),
        "description_too_long",
        id="desc_1025",
    ),
    pytest.param(
        "pdf-tools",
        md("name: pdf-tools\ndescription: >\n  Folded\n  text.\n"),
        {"description": "Folded text."},
        id="desc_folded_block_stripped",
    ),
    # --- optional fields
    pytest.param("pdf-tools", with_field("license: MIT"), {"license": "MIT"}, id="license"),
    pytest.param("pdf-tools", with_field("license: 2.0"), "license_invalid", id="license_number"),
    pytest.param(
        "pdf-tools", with_field(f"compatibility: {'c' * 500}"), {"compatibility": "c" * 500}, id="compat_500"
    ),
    pytest.param(
        "pdf-tools", with_field(f"compatibility: {'c' * 501}"), "compatibility_too_long", id="compat_501"
    ),
    pytest.param("pdf-tools", with_field("compatibility: ''"), "compatibility_invalid", id="compat_empty"),
    pytest.param(
        "pdf-tools", with_field("compatibility: [linux]"), "compatibility_invalid", id="compat_list"
    ),
    pytest.param(
        "pdf-tools",
        with_field("license:\ncompatibility:\nmetadata:"),
        {"license": None, "compatibility": None, "metadata": {}},
        id="optional_nulls_are_absent",
    ),
    pytest.param(
        "pdf-tools",
        with_field("metadata:\n  author: me\n  version: '1.0'"),
        {"metadata": {"author": "me", "version": "1.0"}},
        id="metadata",
    ),
    pytest.param(
        "pdf-tools", with_field("metadata:\n  version: 1.0"), "metadata_invalid", id="metadata_float"
    ),
    pytest.param(
        "pdf-tools", with_field("metadata:\n  a:\n    b: c"), "metadata_invalid", id="metadata_nested"
    ),
    pytest.param("pdf-tools", with_field("metadata: [a, b]"), "metadata_invalid", id="metadata_list"),
    pytest.param("pdf-tools", with_field("metadata:\n  1: one"), "metadata_invalid", id="metadata_int_key"),
    # --- allowed-tools
    pytest.param(
        "pdf-tools",
        with_field("allowed-tools: Bash(git:*) Read"),
        {"allowed_tools": ("Bash(git:*)", "Read"), "declares_allowed_tools": True},
        id="allowed_tools_string",
    ),
    pytest.param(
        "pdf-tools",
        with_field("allowed-tools: Bash(git add:*), Read,Grep Read"),
        {"allowed_tools": ("Bash(git add:*)", "Read", "Grep")},
        id="allowed_tools_commas_parentheses_duplicates",
    ),
    pytest.param(
        "pdf-tools",
        with_field("allowed-tools:\n  - Read\n  - Bash(git status:*)"),
        {"allowed_tools": ("Read", "Bash(git status:*)"), "declares_allowed_tools": True},
        id="allowed_tools_list",
    ),
    pytest.param(
        "pdf-tools", with_field("allowed-tools: [Read, 3]"), "allowed_tools_invalid", id="tools_non_str"
    ),
    pytest.param(
        "pdf-tools", with_field("allowed-tools: [Read, '']"), "allowed_tools_invalid", id="tools_empty"
    ),
    pytest.param(
        "pdf-tools", with_field("allowed-tools: {Read: 1}"), "allowed_tools_invalid", id="tools_mapping"
    ),
    pytest.param(
        "pdf-tools", with_field("allowed-tools: Bash(git"), "allowed_tools_invalid", id="tools_unbalanced"
    ),
    pytest.param(
        "pdf-tools", with_field("allowed-tools: Read)"), "allowed_tools_invalid", id="tools_stray_paren"
    ),
    pytest.param(
        "pdf-tools",
        with_field("allowed-tools: ''"),
        {"allowed_tools": (), "declares_allowed_tools": True},
        id="allowed_tools_declared_empty",
    ),
    pytest.param(
        "pdf-tools", md(), {"allowed_tools": (), "declares_allowed_tools": False}, id="allowed_tools_absent"
    ),
    # --- unknown keys: kept and flagged, never rejected
    pytest.param(
        "pdf-tools",
        with_field("user-invocable: false\nwhen_to_use: On PDFs.\nhooks: {pre: [lint]}\nupdated: 2024-05-01"),
        {
            "unknown_keys": ("user-invocable", "when_to_use", "hooks", "updated"),
            "extra_front_matter": {
                "user-invocable": False,
                "when_to_use": "On PDFs.",
                "hooks": {"pre": ["lint"]},
                "updated": "2024-05-01",
            },
            "warnings": ("unknown_keys",),
        },
        id="unknown_keys_kept_and_flagged",
    ),
    pytest.param("pdf-tools", with_field("ratio: .nan"), "front_matter_value_invalid", id="extra_value_nan"),
    pytest.param(
        "pdf-tools", with_field("x:\n  1: one"), "front_matter_value_invalid", id="extra_nested_int_key"
    ),
    pytest.param("pdf-tools", with_field("42: answer"), "front_matter_key_invalid", id="top_level_int_key"),
    # --- a realistic skill
    pytest.param(
        "pdf-tools",
        REALISTIC.encode(),
        {
            "name": "pdf-tools",
            "description": "Extract text and tables from PDF files, fill forms and merge documents. "
            "Use when the user mentions PDFs, forms or document extraction.",
            "license": "Apache-2.0",
            "compatibility": "Requires Python 3.11+ and the pdfplumber package.",
            "metadata": {"author": "example-org", "version": "1.2"},
            "allowed_tools": ("Bash(python:*)", "Read"),
            "unknown_keys": (),
            "extra_front_matter": {},
            "warnings": (),
            "body": REALISTIC.split("---\n", 2)[2],
            "references": (
                "scripts/extract.py",
                "references/forms/filling.md",
                "references/api.md",
                "assets/templates/invoice.docx",
            ),
        },
        id="realistic_full_skill",
    ),
]


@pytest.mark.parametrize(("folder", "raw", "expected"), CASES)
def test_corpus(folder, raw, expected):
    if isinstance(expected, str):
        with pytest.raises(SkillParseError) as caught:
            parse_skill_md(raw, path="skills/x/SKILL.md", folder_name=folder)
        assert caught.value.rule == expected
    else:
        parsed = parse_skill_md(raw, path="skills/x/SKILL.md", folder_name=folder)
        assert {field: getattr(parsed, field) for field in expected} == expected


def test_corpus_covers_every_rule_and_is_large_enough():
    rules = {param.values[2] for param in CASES if isinstance(param.values[2], str)}
    assert rules == {rule.value for rule in SkillParseRule}
    assert len(CASES) >= 45


def test_every_rule_is_in_the_documented_catalogue():
    for rule in SkillParseRule:
        assert f"``{rule.value}``" in parsing.__doc__


def test_error_names_the_file_and_the_rule():
    with pytest.raises(SkillParseError) as caught:
        parse_skill_md(with_name("Bad_Name"), path="repo/skills/bad/SKILL.md", folder_name="bad")
    error = caught.value
    assert error.code == "skill_invalid"
    assert error.path == "repo/skills/bad/SKILL.md"
    assert error.rule is SkillParseRule.NAME_INVALID
    assert error.message == (
        "repo/skills/bad/SKILL.md: 'name' may contain only lowercase letters and digits (of any script) "
        "and single hyphens, and must not start or end with a hyphen (rule name_invalid)"
    )
    assert error.as_dict() == {
        "code": "skill_invalid",
        "message": error.message,
        "extra": {"path": "repo/skills/bad/SKILL.md", "rule": "name_invalid"},
    }


def test_yaml_error_reports_the_file_line_and_explains_tabs():
    with pytest.raises(SkillParseError) as caught:
        parse_skill_md(md("name: pdf-tools\n\tdescription: x\n"), path="a/SKILL.md", folder_name=None)
    assert caught.value.extra == {"path": "a/SKILL.md", "rule": "yaml_invalid", "line": 3}
    assert caught.value.message == (
        "a/SKILL.md, line 3: invalid YAML front matter: found character '\\t' that cannot start any token "
        "(YAML does not allow tabs for indentation) (rule yaml_invalid)"
    )


def test_duplicate_key_message_names_the_key():
    with pytest.raises(SkillParseError) as caught:
        parse_skill_md(md(FRONT + "name: other\n"), path="a/SKILL.md", folder_name=None)
    assert caught.value.detail == "invalid YAML front matter: duplicate key 'name'"
    assert caught.value.line == 4


def test_alias_bomb_is_refused_quickly():
    # In a daemon thread so that a regression fails the test instead of hanging the suite.
    errors: list[SkillParseError] = []

    def attempt() -> None:
        try:
            parse_skill_md(md(FRONT + laughs(10)), path="a/SKILL.md", folder_name=None)
        except SkillParseError as error:
            errors.append(error)

    started = time.perf_counter()
    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert time.perf_counter() - started < 1.0
    assert [error.detail for error in errors] == [
        "invalid YAML front matter: aliases (*name) are not allowed"
    ]


def test_error_message_never_quotes_a_refused_value():
    secretish = "tok" + "en-" + "q7" * 20
    with pytest.raises(SkillParseError) as caught:
        parse_skill_md(with_field(f"metadata:\n  key: [{secretish}]"), path="a/SKILL.md", folder_name=None)
    assert caught.value.rule == "metadata_invalid"
    assert secretish not in caught.value.message


def test_checksum_is_sha256_of_the_normalised_full_text():
    parsed = parse_skill_md(md(), path="a/SKILL.md", folder_name=None)
    assert parsed.checksum == hashlib.sha256(md()).hexdigest()


def test_checksum_ignores_bom_and_line_endings():
    plain = parse_skill_md(md(), path="a/SKILL.md", folder_name=None).checksum
    crlf = parse_skill_md(b"\xef\xbb\xbf" + md().replace(b"\n", b"\r\n"), path="a/SKILL.md", folder_name=None)
    assert crlf.checksum == plain


def test_checksum_changes_when_only_the_front_matter_changes():
    before = parse_skill_md(md(), path="a/SKILL.md", folder_name=None)
    after = parse_skill_md(md(FRONT.replace("PDF files", "PDFs")), path="a/SKILL.md", folder_name=None)
    assert before.body == after.body
    assert before.checksum != after.checksum


def test_parsed_skill_is_frozen():
    parsed = parse_skill_md(md(), path="a/SKILL.md", folder_name=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.name = "other"  # type: ignore[misc]
