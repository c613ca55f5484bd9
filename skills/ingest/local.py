"""Read a local folder of skills (air-gapped installs) into a :class:`Snapshot`.

The walk never follows symbolic links (a linked folder is not entered, a linked SKILL.md is reported and
not read), skips ``.git`` and ``node_modules``, and reads only files that discovery selects.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from skills.errors import SkillFetchError, SkillSourceInvalid
from skills.ingest.discovery import SKILL_FILE, SKIPPED_FOLDERS
from skills.ingest.snapshot import (
    Deadline,
    FileFailure,
    FileProblem,
    Snapshot,
    SyncLimits,
    read_tree,
)
from skills.models import SkillSource
from skills.parsing import MAX_FILE_BYTES

MAX_WALKED_ENTRIES = 200_000


def fetch_local_folder(source: SkillSource, *, limits: SyncLimits) -> Snapshot:
    root = Path(source.path)
    if not root.is_dir():
        raise SkillSourceInvalid(f"The folder {source.path!r} does not exist or is not a folder.")
    deadline = Deadline(limits.max_seconds, limits.clock)
    files, links = _walk(root)
    failures = [FileFailure(path, "symlink", f"{path} is a symbolic link and was not read") for path in links]
    return read_tree(
        files,
        lambda path, limit: _read(root, path, limit=limit),
        manifest_limit=2 * 1024 * 1024,
        root_name=root.resolve().name,
        limits=limits,
        deadline=deadline,
        failures=failures,
    )


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """(regular files, symlinked SKILL.md files), as relative ``/`` paths, never following links."""
    files: list[str] = []
    links: list[str] = []
    seen = 0
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_FOLDERS)
        relative = Path(folder).relative_to(root).as_posix()
        for filename in filenames:
            seen += 1
            if seen > MAX_WALKED_ENTRIES:
                raise SkillFetchError(f"The folder holds more than {MAX_WALKED_ENTRIES} files.")
            path = filename if relative == "." else f"{relative}/{filename}"
            mode = os.lstat(os.path.join(folder, filename)).st_mode
            if stat.S_ISLNK(mode):
                links += [path] if filename == SKILL_FILE else []
            elif stat.S_ISREG(mode):
                files.append(path)
    return files, links


def _read(root: Path, path: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    target = root / path
    try:
        # O_NOFOLLOW: a file swapped for a link after the walk is still not followed.
        descriptor = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise FileProblem("unreadable", f"{path} could not be opened ({exc.strerror})") from None
    with os.fdopen(descriptor, "rb") as handle:
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise FileProblem("file_too_large", f"{path} is larger than {limit} bytes")
    return raw
