"""Fixtures and builders for the skills tests: SKILL.md texts, folders on disk, sources, the fake GitHub."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.vocabulary import DataClass, TrustZone
from skills.models import SkillSource, SkillSourceKind, SkillTrustLevel
from skills.services import skill_source_create
from tests.skills.github_server import FakeGitHub

_sequence = itertools.count(1)


def skill_md(
    name: str, description: str = "Does a useful thing.", body: str = "# Steps\n\nDo it well.\n"
) -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}".encode()


def write_files(root: Path, files: dict[str, bytes]) -> Path:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return root


def source_make(**fields: Any) -> SkillSource:
    values: dict[str, Any] = {
        "name": f"source-{next(_sequence)}",
        "kind": SkillSourceKind.LOCAL_FOLDER,
        "trust_level": SkillTrustLevel.COMMUNITY,
        "default_data_class": DataClass.SOURCE_CODE,
        "default_ceiling": TrustZone.EXTERNAL_EU,
    }
    values.update(fields)
    return skill_source_create(**values)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake
