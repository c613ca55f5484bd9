"""Fuzzing the two parsers of untrusted input: SKILL.md and uploaded zip archives.

Whatever the input, the only outcomes are a result or the module's typed error; never another
exception. Bounded and deterministic (``derandomize``), so a failure reproduces on every machine.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills.errors import SkillArchiveRejected, SkillParseError
from skills.ingest.archives import fetch_archive
from skills.ingest.snapshot import Snapshot, SyncLimits
from skills.models import SkillSource
from skills.parsing import ParsedSkill, parse_skill_md

FUZZ = settings(
    max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# --- SKILL.md ----------------------------------------------------------------------------------------------

YAML_NOISE = st.sampled_from(
    [
        "",
        "&a x",
        "*a",
        "!!binary aGk=",
        "[1, 2",
        "{a: 1}",
        "- x",
        "\t",
        "~",
        ".nan",
        "2024-05-01",
        "'",
        '"',
        "|",
        ">",
        "? x",
    ]
)
NAMES = st.one_of(
    st.sampled_from(["house-style", "a", "x" * 64, "x" * 65, "-bad", "bad-", "two--hyphens", "Upper", "é"]),
    st.text(max_size=70),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=40), YAML_NOISE
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.sampled_from(
    ["name", "description", "license", "compatibility", "metadata", "allowed-tools", "x-extra", "1", "name"]
)


def _render(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(_render(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in value.items()) + "}"
    return str(value)


@st.composite
def near_valid_documents(draw) -> bytes:
    lines = [f"name: {draw(NAMES)}", f"description: {draw(st.text(max_size=60))}"]
    lines += [f"{draw(KEYS)}: {_render(draw(VALUES))}" for _ in range(draw(st.integers(0, 4)))]
    lines = draw(st.permutations(lines))
    opening = draw(st.sampled_from(["---", "--- ", "---\t", "--", ""]))
    closing = draw(st.sampled_from(["---", "--- ", "", "----"]))
    body = draw(st.text(max_size=200))
    text = "\n".join([opening, *lines, closing, body])
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    raw = text.replace("\n", newline).encode("utf-8", errors="surrogatepass")
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + raw


def parse_or_refuse(raw: bytes, folder_name: str | None) -> None:
    try:
        result = parse_skill_md(raw, path="pack/skill/SKILL.md", folder_name=folder_name)
    except SkillParseError as error:
        assert error.code == "skill_invalid"
        return
    assert isinstance(result, ParsedSkill)


@FUZZ
@given(raw=st.binary(max_size=2048), folder_name=st.none() | st.text(max_size=10))
def test_arbitrary_bytes_are_parsed_or_refused_with_a_typed_error(raw, folder_name):
    parse_or_refuse(raw, folder_name)


@FUZZ
@given(raw=near_valid_documents(), folder_name=st.none() | st.sampled_from(["house-style", "a"]))
def test_near_valid_documents_are_parsed_or_refused_with_a_typed_error(raw, folder_name):
    parse_or_refuse(raw, folder_name)


def test_the_document_strategy_reaches_both_outcomes():
    """Guards the fuzzing above against a strategy that only ever produces refusals."""
    valid = b"---\nname: house-style\ndescription: Applies the house style.\n---\nBody\n"
    assert parse_skill_md(valid, path="SKILL.md", folder_name="house-style").name == "house-style"
    assert (
        parse_skill_md(b"\r\n".join(valid.split(b"\n")), path="SKILL.md", folder_name=None).body == "Body\n"
    )


# --- zip archives ------------------------------------------------------------------------------------------

MEMBER_NAMES = st.one_of(
    st.sampled_from(
        [
            "pack/ok/SKILL.md",
            "ok/SKILL.md",
            "../evil/SKILL.md",
            "pack/../../SKILL.md",
            "/etc/passwd",
            "C:/skills/SKILL.md",
            "c:evil",
            "pack\\..\\SKILL.md",
            "pack//SKILL.md",
            "./pack/SKILL.md",
            "pack/./SKILL.md",
            "pack/dir/",
            "ünï/çødé/SKILL.md",
            ".claude-plugin/marketplace.json",
            "a" * 300 + "/SKILL.md",
        ]
    ),
    st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4).map("/".join),
)
SKILL_BODY = b"---\nname: ok\ndescription: A skill.\n---\nBody\n"
CONTENTS = st.one_of(st.just(SKILL_BODY), st.binary(max_size=256), st.just(b'{"plugins": 3}'))
MODES = st.sampled_from([0, stat.S_IFREG | 0o644, stat.S_IFLNK | 0o777, stat.S_IFDIR | 0o755])


@st.composite
def archives(draw) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for _ in range(draw(st.integers(0, 6))):
            info = zipfile.ZipInfo(draw(MEMBER_NAMES))
            info.external_attr = draw(MODES) << 16
            if draw(st.booleans()):
                info.flag_bits |= draw(st.sampled_from([0x1, 0x8]))
            archive.writestr(info, draw(CONTENTS))
    data = buffer.getvalue()
    if draw(st.booleans()):  # corrupt a few bytes: headers that lie about sizes, names or CRCs
        mutable = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            if mutable:
                mutable[draw(st.integers(0, len(mutable) - 1))] = draw(st.integers(0, 255))
        data = bytes(mutable)
    return data


@pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")
@FUZZ
@given(data=archives())
def test_any_archive_yields_a_snapshot_or_a_typed_rejection(data):
    handle, path = tempfile.mkstemp(suffix=".zip")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        try:
            snapshot = fetch_archive(SkillSource(path=path), limits=SyncLimits())
        except SkillArchiveRejected as rejection:
            assert rejection.code == "skill_archive_rejected"
            return
        assert isinstance(snapshot, Snapshot)
        assert all(not f.path.startswith("/") and ".." not in f.path.split("/") for f in snapshot.files)
    finally:
        os.unlink(path)


def test_member_name_flagged_utf8_that_is_not_is_rejected_as_invalid(tmp_path):
    """Found by the fuzzing above: zipfile raised UnicodeDecodeError, which escaped as a crash."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("pack/é/SKILL.md", SKILL_BODY)  # non-ASCII: stored with the UTF-8 flag
    path = tmp_path / "bad-name.zip"
    path.write_bytes(buffer.getvalue().replace("é".encode(), b"\x80\x80"))
    with pytest.raises(SkillArchiveRejected) as rejected:
        fetch_archive(SkillSource(path=str(path)), limits=SyncLimits())
    assert rejected.value.extra["rule"] == "invalid"
