"""Read a GitHub source into a :class:`Snapshot`, pinned to one commit.

Per sync: the ref is resolved to a commit SHA once (``GET /repos/{o}/{r}/commits/{ref}``); the tree is
listed by that SHA (``GET /repos/{o}/{r}/git/trees/{sha}?recursive=1``); every body is fetched by that SHA
(``https://raw.githubusercontent.com/{o}/{r}/{sha}/{path}``). So one sync never mixes two commits, and a
moving branch cannot change a file between listing and reading.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from skills.errors import (
    GitHubNotFound,
    GitHubResponseInvalid,
    GitHubUrlRefused,
    SkillMarketplaceInvalid,
    SkillSourceInvalid,
)
from skills.ingest.discovery import MANIFEST_PATH, Marketplace, parse_marketplace, skill_paths
from skills.ingest.github_http import GitHubClient, check_url
from skills.ingest.snapshot import (
    Deadline,
    DeadlineExceeded,
    FileFailure,
    FileProblem,
    Snapshot,
    SyncLimits,
    fetch_bounded,
)
from skills.models import SkillSource, SkillSourceKind
from skills.parsing import MAX_FILE_BYTES
from skills.tokens import token_from_env

API = "https://api.github.com"
RAW = "https://raw.githubusercontent.com"
MAX_TREE_BYTES = 16 * 1024 * 1024
MAX_COMMIT_BYTES = 4 * 1024 * 1024
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class GitHubLocation:
    """``path``: the SKILL.md (single file), the manifest (marketplace) or a sub-folder ("" = whole repo)."""

    owner: str
    repo: str
    ref: str
    path: str
    kind: SkillSourceKind

    @property
    def repository_url(self) -> str:
        return f"https://github.com/{self.owner}/{self.repo}"


def parse_github_url(url: str) -> GitHubLocation:
    """Understand a GitHub URL someone pasted: a repository, a ``tree/<ref>/<folder>``, a
    ``blob/<ref>/<file>`` or a raw file URL. A ref containing ``/`` cannot be told from a path here;
    the first segment is taken as the ref (set ``ref`` on the source for such branches)."""
    parsed = check_url(url)
    parts = [part for part in parsed.path.split("/") if part]
    if parsed.host == "raw.githubusercontent.com" and len(parts) >= 4:
        return _location(parts[0], parts[1], parts[2], "/".join(parts[3:]), file=True)
    if parsed.host != "github.com" or len(parts) < 2:
        raise GitHubUrlRefused("Give a https://github.com/<owner>/<repo> URL (optionally tree/ or blob/).")
    owner, repo = parts[0], parts[1].removesuffix(".git")
    if len(parts) == 2:
        return _location(owner, repo, "", "", file=False)
    if len(parts) >= 4 and parts[2] in ("tree", "blob"):
        return _location(owner, repo, parts[3], "/".join(parts[4:]), file=parts[2] == "blob")
    raise GitHubUrlRefused("Give a https://github.com/<owner>/<repo> URL (optionally tree/ or blob/).")


def _location(owner: str, repo: str, ref: str, path: str, *, file: bool) -> GitHubLocation:
    if not (_NAME.fullmatch(owner) and _NAME.fullmatch(repo)) or repo in (".", ".."):
        raise GitHubUrlRefused("The owner or repository name is not valid.")
    path = _clean_path(path)
    if not file:
        kind = SkillSourceKind.GITHUB_REPO
    elif path == MANIFEST_PATH:
        kind = SkillSourceKind.GITHUB_MARKETPLACE
    else:
        kind = SkillSourceKind.GITHUB_FILE
    return GitHubLocation(owner=owner, repo=repo, ref=ref, path=path, kind=kind)


def _clean_path(path: str) -> str:
    parts = [part for part in path.split("/") if part]
    if any(part in (".", "..") or "\\" in part or "\x00" in part for part in parts):
        raise GitHubUrlRefused("The path inside the repository is not valid.")
    return "/".join(parts)


def source_location(source: SkillSource) -> GitHubLocation:
    """Where a GitHub source points. Its ``url`` must be the repository URL."""
    location = parse_github_url(source.url)
    if location.kind != SkillSourceKind.GITHUB_REPO or location.path:
        raise SkillSourceInvalid("A GitHub source's URL must be https://github.com/<owner>/<repo>.")
    path = _clean_path(source.path)
    if source.kind == SkillSourceKind.GITHUB_MARKETPLACE:
        path = path or MANIFEST_PATH
    return GitHubLocation(location.owner, location.repo, source.ref, path, SkillSourceKind(source.kind))


def source_token(source: SkillSource) -> str | None:
    """The token from the environment variable the source names (skills.tokens). It is never stored or logged."""
    return token_from_env(source.token_env) if source.token_env else None


def fetch_github(
    source: SkillSource, *, limits: SyncLimits, transport: httpx.BaseTransport | None = None
) -> Snapshot:
    """A snapshot of the source at the commit its ref resolves to now. Raises typed fetch errors."""
    location = source_location(source)
    deadline = Deadline(limits.max_seconds, limits.clock)
    with GitHubClient(token=source_token(source), deadline=deadline, transport=transport) as client:
        try:
            sha = resolve_ref(client, location)
            if location.kind == SkillSourceKind.GITHUB_FILE:
                return _single_file(client, location, sha, limits, deadline)
            return _tree_snapshot(client, location, sha, limits, deadline)
        except DeadlineExceeded:
            raise GitHubResponseInvalid(
                "The time limit was reached before the repository was listed."
            ) from None


def resolve_ref(client: GitHubClient, location: GitHubLocation) -> str:
    ref = quote(location.ref or "HEAD", safe="")
    data = client.get_json(
        f"{API}/repos/{location.owner}/{location.repo}/commits/{ref}", limit=MAX_COMMIT_BYTES
    )
    sha = data.get("sha") if isinstance(data, dict) else None
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        raise GitHubResponseInvalid("GitHub did not answer with a commit SHA for the ref.")
    return sha


def _raw_reader(client: GitHubClient, location: GitHubLocation, sha: str) -> Callable[[str], bytes]:
    """Reads one file by commit SHA; a missing or unreadable file fails that file only."""

    def read(path: str) -> bytes:
        url = f"{RAW}/{location.owner}/{location.repo}/{sha}/{quote(path)}"
        try:
            return client.get_bytes(url, limit=MAX_FILE_BYTES)
        except GitHubNotFound:
            raise FileProblem("not_found", f"{path} was not found at commit {sha}") from None
        except GitHubResponseInvalid as exc:
            raise FileProblem("fetch_failed", exc.message) from None

    return read


def _single_file(
    client: GitHubClient, location: GitHubLocation, sha: str, limits: SyncLimits, deadline: Deadline
) -> Snapshot:
    root_name = location.repo
    files, failures, reason = fetch_bounded(
        (location.path,),
        _raw_reader(client, location, sha),
        root_name=root_name,
        limits=limits,
        deadline=deadline,
    )
    missing = any(failure.rule == "not_found" for failure in failures)
    # A 404 by commit SHA is definite: the file does not exist at that commit, so it is gone upstream.
    present = frozenset() if missing else frozenset({location.path})
    return Snapshot(source_sha=sha, present=present, files=files, failures=failures, partial_reason=reason)


def _tree_snapshot(
    client: GitHubClient, location: GitHubLocation, sha: str, limits: SyncLimits, deadline: Deadline
) -> Snapshot:
    blobs, truncated = list_tree(client, location, sha)
    scan = location.kind == SkillSourceKind.GITHUB_REPO
    # Paths in a manifest are relative to the folder holding .claude-plugin/; a repository source may
    # be narrowed to a sub-folder.
    base = location.path if scan else posixpath.dirname(posixpath.dirname(location.path))
    prefix = f"{base}/" if base else ""
    failures: list[FileFailure] = []
    manifest = location.path if not scan else prefix + MANIFEST_PATH
    marketplace = _marketplace(client, location, sha, manifest, blobs, failures)
    relative = [path.removeprefix(prefix) for path in blobs if path.startswith(prefix)]
    found = [prefix + path for path in skill_paths(relative, marketplace, scan=scan)]
    oversized = [path for path in found if blobs[path] > MAX_FILE_BYTES]
    failures += [
        FileFailure(p, "file_too_large", f"{p} is {blobs[p]} bytes; max {MAX_FILE_BYTES}") for p in oversized
    ]
    wanted = [path for path in found if path not in oversized]
    root_name = posixpath.basename(base) if base else location.repo
    files, fetch_failures, reason = fetch_bounded(
        wanted, _raw_reader(client, location, sha), root_name=root_name, limits=limits, deadline=deadline
    )
    if truncated:
        reason = "; ".join(
            filter(None, [reason, "GitHub truncated the tree listing, so nothing was orphaned"])
        )
    return Snapshot(
        source_sha=sha,
        present=None if truncated else frozenset(found),
        files=files,
        failures=tuple(failures) + fetch_failures,
        partial_reason=reason,
    )


def list_tree(client: GitHubClient, location: GitHubLocation, sha: str) -> tuple[dict[str, int], bool]:
    """Regular files of the commit (path → size) and whether GitHub truncated the listing.
    Symlinks and submodules are left out: they are never read."""
    url = f"{API}/repos/{location.owner}/{location.repo}/git/trees/{sha}?recursive=1"
    data = client.get_json(url, limit=MAX_TREE_BYTES)
    entries = data.get("tree") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise GitHubResponseInvalid("GitHub's tree listing has no 'tree' list.")
    blobs: dict[str, int] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "blob" or entry.get("mode") == "120000":
            continue
        path, size = entry.get("path"), entry.get("size", 0)
        if isinstance(path, str) and isinstance(size, int) and _is_clean(path):
            blobs[path] = size
    return blobs, bool(data.get("truncated"))


def _is_clean(path: str) -> bool:
    parts = path.split("/")
    return all(part and part not in (".", "..") and "\\" not in part for part in parts)


def _marketplace(
    client: GitHubClient,
    location: GitHubLocation,
    sha: str,
    path: str,
    blobs: dict[str, int],
    failures: list[FileFailure],
) -> Marketplace | None:
    """The manifest of a marketplace source (required), or of a repository (optional: a broken one is
    reported as a failed file and the ordinary scan goes on)."""
    required = location.kind == SkillSourceKind.GITHUB_MARKETPLACE
    if path not in blobs:
        if required:
            raise GitHubNotFound(f"{path} does not exist at commit {sha}.")
        return None
    try:
        marketplace = parse_marketplace(_raw_reader(client, location, sha)(path))
    except FileProblem as problem:
        if required:
            raise GitHubResponseInvalid(f"{path} could not be read: {problem.message}") from None
        failures.append(FileFailure(path, "marketplace_invalid", problem.message))
        return None
    except SkillMarketplaceInvalid as exc:
        if required:
            raise
        failures.append(FileFailure(path, "marketplace_invalid", exc.message))
        return None
    failures += [
        FileFailure(f"{path}#{name}", "plugin_skipped", reason) for name, reason in marketplace.skipped
    ]
    return marketplace
