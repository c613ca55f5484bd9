"""What a fetcher hands to the sync: the files it read, what it could not read, and why it stopped early."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from skills.errors import SkillMarketplaceInvalid
from skills.ingest.discovery import MANIFEST_PATH, Marketplace, parse_marketplace, skill_paths
from skills.parsing import MAX_FILE_BYTES

MAX_FILES_PER_SYNC = 500
MAX_SECONDS_PER_SYNC = 120.0


@dataclass(frozen=True)
class SyncLimits:
    """Bounds of one sync. ``clock`` is injectable so the time bound can be tested without waiting."""

    max_files: int = MAX_FILES_PER_SYNC
    max_seconds: float = MAX_SECONDS_PER_SYNC
    clock: Callable[[], float] = time.monotonic


class DeadlineExceeded(Exception):
    """The sync's time budget ran out; fetchers stop and report a partial sync."""


@dataclass
class Deadline:
    """A monotonic time budget, started at construction."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def remaining(self) -> float:
        return self.seconds - (self.clock() - self.started)

    def check(self) -> float:
        """The remaining seconds; raises :class:`DeadlineExceeded` when none are left."""
        remaining = self.remaining()
        if remaining <= 0:
            raise DeadlineExceeded(f"time limit of {self.seconds:g} s reached")
        return remaining


@dataclass(frozen=True)
class FetchedFile:
    """One SKILL.md as read. ``folder_name`` is what the skill's name must equal (None: not checked)."""

    path: str
    raw: bytes
    folder_name: str | None


@dataclass(frozen=True)
class FileFailure:
    """A file (or manifest entry) that was not ingested; the others still are. Never quotes content."""

    path: str
    rule: str
    message: str


@dataclass(frozen=True)
class Snapshot:
    """A source as fetched. ``present`` is every SKILL.md path that exists upstream (fetched or not);
    None means the listing itself is incomplete, so nothing may be orphaned."""

    source_sha: str
    present: frozenset[str] | None
    files: tuple[FetchedFile, ...]
    failures: tuple[FileFailure, ...] = ()
    partial_reason: str = ""


class FileProblem(Exception):
    """One file could not be read; it becomes a :class:`FileFailure` and the sync goes on."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


def read_tree(
    names: Collection[str],
    read: Callable[[str, int], bytes],
    *,
    manifest_limit: int,
    root_name: str | None,
    limits: SyncLimits,
    deadline: Deadline,
    failures: Sequence[FileFailure] = (),
) -> Snapshot:
    """A snapshot of a tree on this machine (a folder or an archive) whose file ``names`` are all known:
    its marketplace manifest if it has one, then every SKILL.md discovery selects, read within the bounds.

    ``read(path, limit)`` reads one file of at most ``limit`` bytes; ``failures`` are those found before
    (unfollowed links). Every found path is present, so a file gone from the tree is orphaned.
    """
    marketplace, manifest_failures = _optional_marketplace(
        (lambda: read(MANIFEST_PATH, manifest_limit)) if MANIFEST_PATH in names else None
    )
    found = skill_paths(names, marketplace)
    files, fetch_failures, reason = fetch_bounded(
        found, lambda path: read(path, MAX_FILE_BYTES), root_name=root_name, limits=limits, deadline=deadline
    )
    return Snapshot(
        source_sha="",
        present=frozenset(found),
        files=files,
        failures=(*failures, *manifest_failures, *fetch_failures),
        partial_reason=reason,
    )


def _optional_marketplace(read: Callable[[], bytes] | None) -> tuple[Marketplace | None, list[FileFailure]]:
    """The tree's marketplace manifest, if it has one (``read`` is None when it has not), and the failures
    it adds: an unreadable or malformed manifest is one failed file and the ordinary scan goes on; each
    plugin the manifest skips is one failure of its own."""
    if read is None:
        return None, []
    try:
        marketplace = parse_marketplace(read())
    except (FileProblem, SkillMarketplaceInvalid) as exc:
        return None, [FileFailure(MANIFEST_PATH, "marketplace_invalid", str(exc))]
    skipped = [
        FileFailure(f"{MANIFEST_PATH}#{name}", "plugin_skipped", reason)
        for name, reason in marketplace.skipped
    ]
    return marketplace, skipped


def folder_name_of(path: str, root_name: str | None) -> str | None:
    """The folder a SKILL.md sits in; at the root, the name of the root (None when it has none)."""
    parts = path.split("/")
    return parts[-2] if len(parts) > 1 else root_name


def fetch_bounded(
    paths: Sequence[str],
    read: Callable[[str], bytes],
    *,
    root_name: str | None,
    limits: SyncLimits,
    deadline: Deadline,
) -> tuple[tuple[FetchedFile, ...], tuple[FileFailure, ...], str]:
    """Read ``paths`` in order within the file and time bounds.

    Returns (files, failures, partial reason). A :class:`FileProblem` from ``read`` fails that file only;
    any other error propagates and fails the sync. The reason says how many files were left unread.
    """
    files: list[FetchedFile] = []
    failures: list[FileFailure] = []
    for index, path in enumerate(paths):
        left = len(paths) - index
        if index >= limits.max_files:
            return (
                tuple(files),
                tuple(failures),
                _left_reason(f"file limit of {limits.max_files} reached", left, len(paths)),
            )
        try:
            deadline.check()
            raw = read(path)
        except DeadlineExceeded as exc:
            return tuple(files), tuple(failures), _left_reason(str(exc), left, len(paths))
        except FileProblem as problem:
            failures.append(FileFailure(path=path, rule=problem.rule, message=problem.message))
            continue
        files.append(FetchedFile(path=path, raw=raw, folder_name=folder_name_of(path, root_name)))
    return tuple(files), tuple(failures), ""


def _left_reason(why: str, left: int, total: int) -> str:
    return f"{why}: {left} of {total} discovered SKILL.md files were not fetched"
