"""One entry point for every kind of source: read it into a :class:`Snapshot` (no database writes)."""

from __future__ import annotations

import httpx

from skills.errors import SkillSourceInvalid
from skills.ingest.archives import fetch_archive
from skills.ingest.github import fetch_github
from skills.ingest.local import fetch_local_folder
from skills.ingest.snapshot import Snapshot, SyncLimits
from skills.models import SkillSource, SkillSourceKind


def default_transport() -> httpx.BaseTransport | None:
    """The HTTP transport for GitHub: None means httpx's default (https with certificate checks).
    Tests replace this function to reach a loopback server; the URL checks are unaffected."""
    return None


def fetch_snapshot(
    source: SkillSource, *, limits: SyncLimits, transport: httpx.BaseTransport | None = None
) -> Snapshot:
    """Raises the typed fetch errors of ``skills.errors``; never writes."""
    if source.kind not in SkillSourceKind.values:
        raise SkillSourceInvalid(f"Unknown source kind {source.kind!r}.")
    kind = SkillSourceKind(source.kind)
    if kind.is_github:
        return fetch_github(source, limits=limits, transport=transport or default_transport())
    if kind == SkillSourceKind.LOCAL_FOLDER:
        return fetch_local_folder(source, limits=limits)
    return fetch_archive(source, limits=limits)
