"""Read an uploaded zip of skills (air-gapped installs) into a :class:`Snapshot`, entirely in memory.

Nothing is ever written to disk. The whole archive is validated before any member is read, and one bad
entry rejects the whole archive (:class:`SkillArchiveRejected` with ``rule``):

=====================  =========================================================================
``invalid``            not a zip, corrupt, encrypted, or a member's data disagrees with its header
``too_many_entries``   more than :data:`MAX_ENTRIES` members
``path_traversal``     an absolute path, a drive letter, a backslash or a ``..`` segment
``duplicate_entry``    two members with the same name
``symlink``            a member that is a symbolic link
``member_too_large``   a member that expands beyond :data:`MAX_MEMBER_BYTES`
``too_large``          the archive file, or all members together, beyond :data:`MAX_TOTAL_BYTES`
=====================  =========================================================================

Reads are bounded by the sizes the headers declare; ``zipfile`` refuses data that runs past its
declared size (CRC check), so a lying header cannot expand further than the limits above.
"""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from pathlib import Path

from skills.errors import SkillArchiveRejected, SkillSourceInvalid
from skills.ingest.snapshot import (
    Deadline,
    FileProblem,
    Snapshot,
    SyncLimits,
    read_tree,
)
from skills.models import SkillSource

MAX_ENTRIES = 2_000
MAX_TOTAL_BYTES = 20 * 1024 * 1024
MAX_MEMBER_BYTES = 5 * 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


def fetch_archive(source: SkillSource, *, limits: SyncLimits) -> Snapshot:
    path = Path(source.path)
    if not path.is_file():
        raise SkillSourceInvalid(f"The archive {source.path!r} does not exist or is not a file.")
    if path.stat().st_size > MAX_TOTAL_BYTES:
        raise SkillArchiveRejected(f"The archive is larger than {MAX_TOTAL_BYTES} bytes.", rule="too_large")
    try:
        with zipfile.ZipFile(path) as archive:
            members = validate_archive(archive)
            return _snapshot(archive, members, limits)
    # zipfile reports a damaged archive in many ways: a member name flagged UTF-8 that is not
    # (UnicodeDecodeError, a ValueError), corrupt compressed data (zlib.error), truncated headers.
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        NotImplementedError,
        RuntimeError,
        ValueError,
        zlib.error,
    ) as exc:
        raise SkillArchiveRejected(
            f"The archive cannot be read ({type(exc).__name__}).", rule="invalid"
        ) from None


def validate_archive(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """Every regular-file member by name, once the whole archive passed the checks of the module docstring."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise SkillArchiveRejected(
            f"The archive has more than {MAX_ENTRIES} entries.", rule="too_many_entries"
        )
    members: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = _checked_name(info.filename)
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SkillArchiveRejected(f"Entry {name!r} is a symbolic link.", rule="symlink")
        if info.flag_bits & 0x1:
            raise SkillArchiveRejected(f"Entry {name!r} is encrypted.", rule="invalid")
        if info.is_dir():
            continue
        if name in members:
            raise SkillArchiveRejected(f"Entry {name!r} appears twice.", rule="duplicate_entry")
        if info.file_size > MAX_MEMBER_BYTES:
            raise SkillArchiveRejected(
                f"Entry {name!r} expands to {info.file_size} bytes; max {MAX_MEMBER_BYTES}.",
                rule="member_too_large",
            )
        total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise SkillArchiveRejected(
                f"The archive expands beyond {MAX_TOTAL_BYTES} bytes.", rule="too_large"
            )
        members[name] = info
    return members


def _checked_name(raw: str) -> str:
    name = raw[:200]
    parts = raw.rstrip("/").split("/")
    if (
        not raw
        or raw.startswith("/")
        or "\\" in raw
        or "\x00" in raw
        or _DRIVE.match(raw)
        or any(part in ("..", ".", "") for part in parts)
    ):
        raise SkillArchiveRejected(f"Entry {name!r} has an unsafe path.", rule="path_traversal")
    return raw.rstrip("/") if raw.endswith("/") else raw


def _snapshot(archive: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], limits: SyncLimits) -> Snapshot:
    deadline = Deadline(limits.max_seconds, limits.clock)
    return read_tree(
        members,
        lambda path, limit: _read(archive, members[path], limit=limit),
        manifest_limit=MAX_MEMBER_BYTES,
        root_name=None,
        limits=limits,
        deadline=deadline,
    )


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, *, limit: int) -> bytes:
    if info.file_size > limit:
        raise FileProblem("file_too_large", f"{info.filename} is {info.file_size} bytes; max {limit}")
    with archive.open(info) as handle:
        return handle.read(limit + 1)
