"""Which files of a listing are skills: ``SKILL.md`` files and Claude plugin marketplace manifests. Pure.

Paths are relative, ``/``-separated. The depth of a file is the number of folders above it (a root
``SKILL.md`` is depth 0). Dot-folders (``.claude/``, ``.curated/``) are searched; ``.git`` and
``node_modules`` never are.

Marketplace manifest (``.claude-plugin/marketplace.json``, read tolerantly): an object whose ``plugins``
is a list; each plugin has a ``name`` and a ``source``. A string source is a folder relative to the
marketplace root (prefixed by ``metadata.pluginRoot`` when given); an object source (a GitHub repository
or URL elsewhere) is not followed and is reported. ``skills`` (a string or a list) names skill folders
relative to the plugin root; without it, every folder under ``<plugin root>/skills/`` is a skill folder.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from skills.errors import SkillMarketplaceInvalid

SKILL_FILE = "SKILL.md"
MAX_DEPTH = 6
SKIPPED_FOLDERS = frozenset({".git", "node_modules"})
MANIFEST_PATH = ".claude-plugin/marketplace.json"
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_PLUGINS = 1000


@dataclass(frozen=True)
class MarketplacePlugin:
    name: str
    skill_folders: tuple[str, ...]  # each holds a SKILL.md
    skill_roots: tuple[str, ...]  # each child folder holding a SKILL.md is a skill


@dataclass(frozen=True)
class Marketplace:
    plugins: tuple[MarketplacePlugin, ...]
    skipped: tuple[tuple[str, str], ...]  # (plugin name, reason)


def depth(path: str) -> int:
    return path.count("/")


def is_skipped(path: str) -> bool:
    return any(part in SKIPPED_FOLDERS for part in path.split("/")[:-1])


def is_discoverable(path: str) -> bool:
    """A ``SKILL.md`` (exact name) at depth ≤ 6, outside ``.git`` and ``node_modules``."""
    return posixpath.basename(path) == SKILL_FILE and depth(path) <= MAX_DEPTH and not is_skipped(path)


def skill_paths(
    files: Iterable[str], marketplace: Marketplace | None = None, *, scan: bool = True
) -> tuple[str, ...]:
    """Sorted SKILL.md paths among ``files``: discoverable ones (when ``scan``) and those a marketplace
    names (at any depth, still never inside ``.git`` or ``node_modules``)."""
    listed = [path for path in files if posixpath.basename(path) == SKILL_FILE and not is_skipped(path)]
    found = {path for path in listed if scan and is_discoverable(path)}
    if marketplace is not None:
        folders = {folder for plugin in marketplace.plugins for folder in plugin.skill_folders}
        roots = {root for plugin in marketplace.plugins for root in plugin.skill_roots}
        for path in listed:
            folder = posixpath.dirname(path)
            if folder in folders or posixpath.dirname(folder) in roots:
                found.add(path)
    return tuple(sorted(found))


def parse_marketplace(raw: bytes) -> Marketplace:
    """Read a marketplace manifest. Raises :class:`SkillMarketplaceInvalid` when it is not JSON, not an
    object, or has no ``plugins`` list; a malformed plugin entry is skipped with a reason."""
    if len(raw) > MAX_MANIFEST_BYTES:
        raise SkillMarketplaceInvalid(f"{MANIFEST_PATH} is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        raise SkillMarketplaceInvalid(f"{MANIFEST_PATH} is not valid UTF-8 JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("plugins"), list):
        raise SkillMarketplaceInvalid(f"{MANIFEST_PATH} must be an object with a 'plugins' list")
    if len(data["plugins"]) > MAX_PLUGINS:
        raise SkillMarketplaceInvalid(f"{MANIFEST_PATH} lists more than {MAX_PLUGINS} plugins")
    metadata = data.get("metadata")
    plugin_root = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    plugins: list[MarketplacePlugin] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for position, entry in enumerate(data["plugins"]):
        name = entry.get("name") if isinstance(entry, dict) else None
        label = name if isinstance(name, str) and name else f"plugins[{position}]"
        if label in seen:
            skipped.append((label, "duplicate plugin name (the first one is used)"))
            continue
        seen.add(label)
        try:
            plugins.append(_plugin(entry, label, plugin_root))
        except _Skip as skip:
            skipped.append((label, str(skip)))
    return Marketplace(plugins=tuple(plugins), skipped=tuple(skipped))


class _Skip(Exception):
    pass


def _plugin(entry: Any, label: str, plugin_root: Any) -> MarketplacePlugin:
    if not isinstance(entry, dict):
        raise _Skip("a plugin entry must be an object")
    source = entry.get("source", "./")
    if isinstance(source, dict):
        raise _Skip("remote plugin sources (GitHub repository, git URL) are not followed")
    if not isinstance(source, str):
        raise _Skip("'source' must be a relative folder")
    if isinstance(plugin_root, str) and plugin_root and not source.startswith("./"):
        source = posixpath.join(plugin_root, source)
    root = _relative(source)
    declared = entry.get("skills")
    if declared is None:
        return MarketplacePlugin(name=label, skill_folders=(), skill_roots=(_join(root, "skills"),))
    items = [declared] if isinstance(declared, str) else declared
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise _Skip("'skills' must be a path or a list of paths")
    folders = tuple(_join(root, _relative(item)) for item in items)
    return MarketplacePlugin(name=label, skill_folders=folders, skill_roots=())


def _relative(path: str) -> str:
    """A folder relative to the marketplace root, normalised; refuses absolute paths and escapes."""
    if path.startswith(("/", "\\")) or "\\" in path or "\x00" in path:
        raise _Skip(f"path {path[:100]!r} is not a relative folder")
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        raise _Skip(f"path {path[:100]!r} escapes the marketplace root")
    return "" if normal == "." else normal


def _join(root: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(root, path)) if root else (path or "")
