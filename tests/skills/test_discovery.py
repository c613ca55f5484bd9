"""Discovery of SKILL.md files and marketplace manifests. Pure: no database."""

from __future__ import annotations

import json

import pytest

from skills.errors import SkillMarketplaceInvalid
from skills.ingest.discovery import is_discoverable, parse_marketplace, skill_paths


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("SKILL.md", True),
        ("pdf/SKILL.md", True),
        (".claude/skills/review/SKILL.md", True),
        (".curated/x/SKILL.md", True),
        ("a/b/c/d/e/f/SKILL.md", True),  # depth 6
        ("a/b/c/d/e/f/g/SKILL.md", False),  # depth 7
        ("node_modules/pkg/SKILL.md", False),
        ("x/node_modules/pkg/SKILL.md", False),
        (".git/SKILL.md", False),
        ("pdf/skill.md", False),
        ("pdf/SKILL.md.bak", False),
        ("pdf/MY-SKILL.md", False),
    ],
)
def test_discoverable_skill_paths(path, expected):
    assert is_discoverable(path) is expected


def manifest(**data) -> bytes:
    return json.dumps(data).encode()


def test_a_marketplace_adds_listed_skill_folders_at_any_depth_but_never_skipped_folders():
    market = parse_marketplace(
        manifest(
            plugins=[
                {"name": "deep", "source": "./", "skills": ["./a/b/c/d/e/f/g/deep", "node_modules/x"]},
                {"name": "default", "source": "./plugins/tools"},
            ]
        )
    )
    files = [
        "a/b/c/d/e/f/g/deep/SKILL.md",
        "node_modules/x/SKILL.md",
        "plugins/tools/skills/lint/SKILL.md",
        "plugins/tools/skills/lint/nested/more/SKILL.md",
        "README.md",
    ]

    assert skill_paths(files, market, scan=False) == (
        "a/b/c/d/e/f/g/deep/SKILL.md",
        "plugins/tools/skills/lint/SKILL.md",
    )


def test_plugin_root_prefixes_bare_sources_and_a_string_skills_entry_is_one_folder():
    market = parse_marketplace(
        manifest(
            metadata={"pluginRoot": "./plugins"},
            plugins=[{"name": "p", "source": "formatter", "skills": "./s/fmt"}],
        )
    )

    assert [(p.name, p.skill_folders) for p in market.plugins] == [("p", ("plugins/formatter/s/fmt",))]


def test_malformed_plugins_are_skipped_with_reasons():
    market = parse_marketplace(
        manifest(
            plugins=[
                {"name": "ok", "source": "./"},
                {"name": "ok", "source": "./other"},
                {"name": "escape", "source": "../../etc"},
                {"name": "absolute", "source": "/etc"},
                {"name": "remote", "source": {"source": "url", "url": "https://example.org/x.git"}},
                {"name": "badskills", "source": "./", "skills": [1, 2]},
                "not an object",
            ]
        )
    )

    assert [p.name for p in market.plugins] == ["ok"]
    assert [name for name, _ in market.skipped] == [
        "ok",
        "escape",
        "absolute",
        "remote",
        "badskills",
        "plugins[6]",
    ]
    assert (
        dict(market.skipped)["remote"]
        == "remote plugin sources (GitHub repository, git URL) are not followed"
    )


@pytest.mark.parametrize("raw", [b"not json", b"[]", manifest(name="x"), manifest(plugins={}), b"\xff\xfe"])
def test_a_manifest_that_is_not_an_object_with_a_plugins_list_is_invalid(raw):
    with pytest.raises(SkillMarketplaceInvalid):
        parse_marketplace(raw)
