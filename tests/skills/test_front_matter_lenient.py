"""The one lenient reading of front matter (skills/front_matter.py): a top-level plain value holding ``: ``
is read as plain text and flagged; every other YAML failure is still ``yaml_invalid``."""

from __future__ import annotations

import pytest

from skills.errors import SkillParseError
from skills.models import Skill
from skills.parsing import parse_skill_md
from skills.services import skill_source_sync
from tests.skills.conftest import source_make, write_files


def md(front: str) -> bytes:
    return f"---\n{front}---\n# Steps\n\nDo it.\n".encode()


def parse(front: str):
    return parse_skill_md(md(front), path="skills/clean/SKILL.md", folder_name="clean")


def rule_of(front: str) -> str:
    with pytest.raises(SkillParseError) as caught:
        parse(front)
    return caught.value.rule.value


def lenient(key: str) -> str:
    return f"front_matter_lenient: value of '{key}' read as plain text"


@pytest.mark.parametrize(
    ("line", "description"),
    [
        ("description: Cleans exports: trims cells, fixes dates", "Cleans exports: trims cells, fixes dates"),
        ("description: Use when: a) exports; b) imports: both", "Use when: a) exports; b) imports: both"),
        ("description: Fixes: issue #12, dates#3 # and more", "Fixes: issue #12, dates#3 # and more"),
        ("description: Say \"hi\": then 'go'", "Say \"hi\": then 'go'"),
        ("description: Step 1: open\tStep 2: close   ", "Step 1: open\tStep 2: close"),
        ("description: Paths: C:\\data and http://x.test/a", "Paths: C:\\data and http://x.test/a"),
        ("description: Ends with a colon: and : spaces :", "Ends with a colon: and : spaces :"),
    ],
)
def test_a_plain_value_with_colon_space_is_read_as_text_and_flagged(line, description):
    parsed = parse(f"name: clean\n{line}\n")
    assert parsed.description == description
    assert parsed.warnings == (lenient("description"),)


def test_every_slipped_top_level_value_is_read_and_flagged_in_order():
    parsed = parse(
        "name: clean\ndescription: Cleans: exports\nlicense: MIT: see LICENSE\n"
        "compatibility: Needs: python\nauthor: Ann: editor\n"
    )
    assert (parsed.description, parsed.license, parsed.compatibility) == (
        "Cleans: exports",
        "MIT: see LICENSE",
        "Needs: python",
    )
    assert parsed.extra_front_matter == {"author": "Ann: editor"}
    assert parsed.warnings == (
        lenient("description"),
        lenient("license"),
        lenient("compatibility"),
        lenient("author"),
        "unknown_keys",
    )


def test_the_checksum_covers_the_file_as_written():
    strict = parse("name: clean\ndescription: 'Cleans: exports'\n")
    slipped = parse("name: clean\ndescription: Cleans: exports\n")
    assert strict.description == slipped.description
    assert strict.checksum != slipped.checksum
    assert strict.warnings == ()


def test_valid_yaml_is_read_strictly_even_where_leniency_would_differ():
    parsed = parse("name: clean\ndescription: Fixes issue #12: dates\n")  # ' #' starts a YAML comment
    assert (parsed.description, parsed.warnings) == ("Fixes issue", ())


@pytest.mark.parametrize(
    ("front", "line"),
    [
        pytest.param("name: clean\nmetadata:\n  note: a: b\ndescription: x\n", 4, id="nested_key"),
        pytest.param('name: clean\ndescription: "Quoted": more\n', 3, id="quoted_start"),
        pytest.param("name: clean\ndescription: 'Quoted': more\n", 3, id="single_quoted_start"),
        pytest.param("name: clean\ndescription: [a]: b\n", 3, id="flow_start"),
        pytest.param("name: clean\ndescription: *a: b\n", 3, id="alias_start"),
        pytest.param("name: clean\ndescription: Cleans: exports\n  and more\n", 4, id="continuation_line"),
        pytest.param(
            "name: clean\ndescription: Cleans: exports\ndescription: again\n", 4, id="duplicate_after_slip"
        ),
        pytest.param("name: clean\n\tdescription: Cleans: exports\n", 3, id="tab_before_slip"),
        pytest.param(
            "name: clean\ndescription: Cleans: exports\nbad: 'open\n", 5, id="unclosed_quote_after_slip"
        ),
        pytest.param("name: clean\ndescription: Cleans:exports: x:y\nx: [\n", 5, id="no_space_then_broken"),
        pytest.param("name: clean\n - description: a: b\n", 3, id="indented_key"),
    ],
)
def test_nothing_else_becomes_lenient(front, line):
    with pytest.raises(SkillParseError) as caught:
        parse(front)
    assert (caught.value.rule.value, caught.value.line) == ("yaml_invalid", line)


def test_a_slipped_value_still_meets_its_own_rule():
    assert rule_of("name: clean\ndescription: Use it: <b>now</b>\n") == "description_invalid"
    assert rule_of("name: clean\ndescription: x\nmetadata: a: b\n") == "metadata_invalid"
    assert rule_of("name: clean: tools\ndescription: x\n") == "name_invalid"


@pytest.mark.django_db
def test_the_warning_is_stored_on_the_skill_and_shown_in_the_review_queue(tmp_path, admin_client):
    folder = write_files(
        tmp_path,
        {
            "clean/SKILL.md": md("name: clean\ndescription: Cleans exports: trims cells, fixes dates\n"),
            "tidy/SKILL.md": md("name: tidy\ndescription: Tidies exports.\n"),
        },
    )
    skill_source_sync(source_id=source_make(path=str(folder)).pk)
    clean = Skill.objects.get(name="clean")
    assert clean.description == "Cleans exports: trims cells, fixes dates"
    assert clean.parse_warnings == [lenient("description")]
    assert Skill.objects.get(name="tidy").parse_warnings == []

    response = admin_client.get("/admin/skills/skill/review/")
    assert [skill.name for skill in response.context["skills"]] == ["clean"]
    html = response.content.decode()
    assert f'<li class="finding-lenient">{lenient("description")}</li>'.replace("'", "&#x27;") in html

    admin_client.post(f"/admin/skills/skill/review/{clean.pk}/acknowledge/")
    assert list(admin_client.get("/admin/skills/skill/review/").context["skills"]) == []
