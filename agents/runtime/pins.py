"""The content versions a run is pinned to (docs/decisions/0010-runs-pin-content-versions.md).

When a run is created it pins what its context is built from: the configuration, the snippets its tags
select and the skills it uses (the configuration's, then the request's), each by the id of its
history record (django-simple-history), in assembly order. Every step builds its context from those
versions and records them, so an editor's change mid-run reaches the next run, not the next step,
and a run's detail says which versions each step used. A snippet created mid-run is not added: the
pin set is what the run started with.

What is pinned is **content**: texts, names, the configuration's tags and skill settings. What decides
whether content may be sent is never pinned: every step reads the live rows' classification (class,
ceiling, enforcement), whether a snippet is still active and a skill still enabled, not orphaned and
trusted enough, and the models, fallbacks and tools of the configuration. A stricter class, a
switched-off snippet or an inactive model applies at the very next step. A pinned row that was deleted
or switched off is left out of the step, reported, and not recorded as used.

Cost: a history record never changes, so a worker keeps each pinned version it read by history id
(``pinned_versions``); the live rows and the composed skill block are kept under the catalogue token
(``pinned_contents``), like the rest of what a configuration resolves to. A step whose pins a worker
already holds reads nothing more than the claim did.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, models

from agents.models import AgentRun
from agents.runtime.parts import compose_skills, configuration_skills
from catalog.models import Configuration
from catalog.selectors import catalog_token_of
from config.caches import cache_register
from config.lru import LruCache
from skills.composition import SkillBlock
from skills.models import Skill
from snippets.models import Snippet

CONFIGURATION, SNIPPET, SKILL = "configuration", "snippet", "skill"

# The fields each kind takes from its pinned version; everything else is read live.
CONTENT_FIELDS: dict[str, tuple[str, ...]] = {
    CONFIGURATION: (
        "system_prompt",
        "snippet_tags",
        "skill_mode",
        "skill_trust_floor",
        "context_usage_note",
        "allow_system_override",
    ),
    SNIPPET: ("name", "description", "text", "sorting", "metadata"),
    SKILL: (
        "name",
        "description",
        "body",
        "content",
        "checksum",
        "license",
        "compatibility",
        "metadata",
        "allowed_tools",
        "source_sha",
    ),
}
_MODELS: dict[str, type[models.Model]] = {CONFIGURATION: Configuration, SNIPPET: Snippet, SKILL: Skill}


@dataclass(frozen=True)
class Pin:
    """One pinned version: the row's kind, identifier and primary key, and its history record's id."""

    kind: str
    identifier: str
    id: int
    history_id: int

    def as_dict(self) -> dict[str, Any]:
        """A new dict of the four fields (every step stores its pins): plain values, so a copy of the
        instance's own dict is ``dataclasses.asdict`` without its deep copy of each."""
        return dict(vars(self))

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Pin:
        return cls(str(raw["kind"]), str(raw["identifier"]), int(raw["id"]), int(raw["history_id"]))


@dataclass(frozen=True)
class PinnedContent:
    """What a step builds its context from, for a run with pins. The rows are the live ones (their
    classification and switches) carrying their pinned content; shared, never changed."""

    configuration_fields: dict[str, Any]
    snippets: tuple[Snippet, ...]
    skills: SkillBlock  # the pinned skills, composed under the pinned configuration's skill settings
    used: tuple[Pin, ...]  # the pins this content holds, in order
    left_out: tuple[tuple[str, str], ...]  # (kind:identifier, reason) of pins not used

    def configuration(self, live: Configuration) -> Configuration:
        """A copy of ``live`` carrying the pinned content fields (``live`` itself is not changed)."""
        pinned = copy.copy(live)
        for field, value in self.configuration_fields.items():
            setattr(pinned, field, value)
        return pinned

    def used_dicts(self) -> list[dict[str, Any]]:
        return [pin.as_dict() for pin in self.used]


# --- taking pins when a run is created -------------------------------------------------------------------


def pins_take(
    *, configuration: Configuration, snippets: Sequence[Snippet], skills: Sequence[Skill]
) -> list[Pin]:
    """The pins of a run starting now: the configuration, ``snippets`` and ``skills`` (in assembly
    order, each once), each at the history record that holds its current content. A row whose latest
    record does not hold it (written by a bulk update, or older than its history) gets a new record
    first, so a pin always names exactly what the run started with. Call inside the run's transaction."""
    rows: list[tuple[str, models.Model]] = [(CONFIGURATION, configuration)]
    rows += [(SNIPPET, snippet) for snippet in dict.fromkeys(snippets)]  # each row once, in order
    rows += [(SKILL, skill) for skill in dict.fromkeys(skills)]
    latest: dict[tuple[str, int], int] = {}
    for kind in (CONFIGURATION, SNIPPET, SKILL):
        latest.update(_current_records(kind, [row for k, row in rows if k == kind]))
    return [Pin(kind, _identifier(kind, row), int(row.pk), latest[(kind, int(row.pk))]) for kind, row in rows]


def _identifier(kind: str, row: models.Model) -> str:
    return str(row.identifier)  # type: ignore[attr-defined]


def _history(kind: str) -> Any:
    return _MODELS[kind].history  # type: ignore[attr-defined]


def _current_records(kind: str, rows: Sequence[models.Model]) -> dict[tuple[str, int], int]:
    """For each of ``rows``: the id of a history record holding its current content (made if none)."""
    if not rows:
        return {}
    history = _history(kind)
    newest = (
        history.filter(id__in=[row.pk for row in rows])
        .order_by()
        .values("id")
        .annotate(newest=models.Max("history_id"))
        .values_list("newest", flat=True)
    )
    records = {record.id: record for record in history.filter(history_id__in=list(newest))}
    stale = [row for row in rows if not _holds(kind, records.get(row.pk), row)]
    if stale:
        history.bulk_history_create(stale, update=True, default_change_reason="pinned by a run")
        for record in history.filter(id__in=[row.pk for row in stale]).order_by("history_id"):
            records[record.id] = record  # the newest one of each row comes last
    return {(kind, int(row.pk)): int(records[row.pk].history_id) for row in rows}


def _holds(kind: str, record: Any, row: models.Model) -> bool:
    return record is not None and all(
        getattr(record, field) == getattr(row, field) for field in CONTENT_FIELDS[kind]
    )


# --- reading pinned content at a step ---------------------------------------------------------------------

_VERSIONS: LruCache[tuple[str, str, int], dict[str, Any]] = cache_register(
    LruCache(4096),
    name="pinned_versions",
    key="(database alias, kind, history record id)",
    invalidation="none needed: a history record is never changed, so its content is a function of its id",
)
_CONTENTS: LruCache[tuple[object, ...], PinnedContent] = cache_register(
    LruCache(512),
    name="pinned_contents",
    key="(database alias, catalogue token, configuration id, the run's pins, SKILL_BLOCK_MAX_BYTES)",
    invalidation=(
        "a write to any catalogue table replaces the catalogue token (database triggers), so an entry "
        "built from live rows under the old token is never looked up again and ages out"
    ),
)


def run_pins(run: AgentRun) -> tuple[Pin, ...]:
    return tuple(Pin.of(raw) for raw in run.pins or ())


def pinned_content(*, configuration: Configuration, pins: Sequence[Pin]) -> PinnedContent:
    """The content ``pins`` name over the live rows, from this worker's cache when ``configuration``
    carries a catalogue token. Raises ``LookupError`` when a pinned history record is gone."""
    catalog = catalog_token_of(configuration)
    if catalog is None:
        return _build(configuration, pins)
    key = (connection.alias, catalog, configuration.pk, tuple(pins), int(settings.SKILL_BLOCK_MAX_BYTES))
    return _CONTENTS.get_or_build(key, lambda: _build(configuration, pins))


def _versions(kind: str, history_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The content fields of each history record, by id; one query for those this worker lacks."""
    alias = connection.alias
    found: dict[int, dict[str, Any]] = {}
    missing = []
    for history_id in history_ids:
        held = _VERSIONS.get((alias, kind, history_id))
        if held is None:
            missing.append(history_id)
        else:
            found[history_id] = held
    if missing:
        fields = CONTENT_FIELDS[kind]
        for values in _history(kind).filter(history_id__in=missing).values("history_id", *fields):
            content = {field: values[field] for field in fields}
            _VERSIONS.put((alias, kind, values["history_id"]), content)
            found[values["history_id"]] = content
    absent = [history_id for history_id in history_ids if history_id not in found]
    if absent:
        raise LookupError(f"pinned {kind} versions {absent} are gone from the history")
    return found


def _build(configuration: Configuration, pins: Sequence[Pin]) -> PinnedContent:
    by_kind = {kind: [pin for pin in pins if pin.kind == kind] for kind in _MODELS}
    versions = {kind: _versions(kind, [pin.history_id for pin in by_kind[kind]]) for kind in _MODELS}
    config_pins = by_kind[CONFIGURATION]
    fields = versions[CONFIGURATION][config_pins[0].history_id] if config_pins else {}
    pinned_configuration = copy.copy(configuration)
    for field, value in fields.items():
        setattr(pinned_configuration, field, value)
    left_out: list[tuple[str, str]] = []
    snippets = _live(SNIPPET, by_kind[SNIPPET], versions[SNIPPET], left_out)
    skills = _live(SKILL, by_kind[SKILL], versions[SKILL], left_out)
    block = compose_skills(pinned_configuration, tuple(skill for skill, _ in skills))
    included = {skill.pk for skill in block.included}
    used = (
        *config_pins,
        *(pin for _, pin in snippets),
        *(pin for skill, pin in skills if skill.pk in included),
    )
    return PinnedContent(
        configuration_fields=fields,
        snippets=tuple(snippet for snippet, _ in snippets),
        skills=block,
        used=tuple(used),
        left_out=tuple(left_out),
    )


def _live(
    kind: str, pins: Sequence[Pin], versions: dict[int, dict[str, Any]], left_out: list[tuple[str, str]]
) -> list[tuple[Any, Pin]]:
    """Copies of the live rows of ``pins`` carrying their pinned content, in pin order. A row deleted,
    or a snippet switched off, is left out with its reason."""
    manager = Skill.objects.select_related("source") if kind == SKILL else Snippet.objects
    live = manager.in_bulk([pin.id for pin in pins]) if pins else {}
    rows = []
    for pin in pins:
        row = live.get(pin.id)
        if row is None:
            left_out.append((f"{kind}:{pin.identifier}", "deleted"))
            continue
        if kind == SNIPPET and not getattr(row, "is_active", True):
            left_out.append((f"{kind}:{pin.identifier}", "inactive"))
            continue
        for field, value in versions[pin.history_id].items():
            setattr(row, field, value)
        rows.append((row, pin))
    return rows


def pinned_skills(*, configuration: Configuration, pins: Sequence[Pin]) -> tuple[Configuration, list[Skill]]:
    """What a skill loaded on demand (``load_skill``) is chosen from, for a run with ``pins``: a copy of
    ``configuration`` carrying its pinned content (the skill mode and trust floor among it) and copies
    of the live rows of the pinned skills carrying their pinned content, in pin order; a deleted skill
    is left out. The live rows are read at every call, so their classification and switches apply at
    once; the pinned versions come from this worker's cache. Raises ``LookupError`` when a pinned
    history record is gone."""
    config_pins = [pin for pin in pins if pin.kind == CONFIGURATION]
    skill_pins = [pin for pin in pins if pin.kind == SKILL]
    pinned_configuration = copy.copy(configuration)
    if config_pins:
        fields = _versions(CONFIGURATION, [config_pins[0].history_id])[config_pins[0].history_id]
        for field, value in fields.items():
            setattr(pinned_configuration, field, value)
    versions = _versions(SKILL, [pin.history_id for pin in skill_pins])
    skills = [skill for skill, _ in _live(SKILL, skill_pins, versions, [])]
    return pinned_configuration, skills


def configuration_pins_take(
    *, configuration: Configuration, snippets: Sequence[Snippet], request_skills: Sequence[Skill]
) -> list[dict[str, Any]]:
    """The pins of a run of ``configuration`` as stored on the run: the configuration, the snippets its
    tags select now, its own skills and then ``request_skills``."""
    skills = [*configuration_skills(configuration), *request_skills]
    pins = pins_take(configuration=configuration, snippets=snippets, skills=skills)
    return [pin.as_dict() for pin in pins]
