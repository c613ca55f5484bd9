"""What a configuration sends whatever the request, resolved once per catalogue version in a worker.

A send needs the configuration's fallback models, its snippet selection, its own skills composed into
the skill block, and the disabled tools. All of it comes from catalogue tables whose every write
replaces the catalogue token (database triggers, ``agents.models.CatalogVersion``), so a worker may
reuse what it resolved for as long as the token read *in the same statement* as the configuration
(the step's claim, or ``agents.selectors.with_catalog_token``) is the same. A configuration without a
token (read any other way, or the token row is missing) is resolved anew at every send.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from catalog.models import Configuration, LlmModel
from catalog.selectors import CATALOG_TOKEN, catalog_token_of, configuration_fallbacks
from config.caches import cache_register
from config.lru import LruCache
from skills.composition import SkillBlock, skill_block
from skills.models import Skill
from snippets.selectors import SnippetSelection, snippet_select
from tools.models import ToolSetting


@dataclass(frozen=True)
class ConfigurationParts:
    fallbacks: tuple[LlmModel, ...]
    selection: SnippetSelection
    own_skills: tuple[Skill, ...]
    skills: SkillBlock  # the configuration's own skills, composed (a request may add its own)
    disabled_tools: frozenset[str]


def configuration_skills(configuration: Configuration) -> list[Skill]:
    """The configuration's own skills in their order, with their sources."""
    links = configuration.skill_links.select_related("skill__source").order_by("position")
    return [link.skill for link in links]


def compose_skills(
    configuration: Configuration, own: list[Skill] | tuple[Skill, ...], request: tuple[Skill, ...] = ()
) -> SkillBlock:
    """The configuration's skills, then the request's, composed under the configuration's settings."""
    return skill_block(
        own,
        request,
        trust_floor=configuration.skill_trust_floor,
        max_bytes=int(settings.SKILL_BLOCK_MAX_BYTES),
        mode=configuration.skill_mode,
    )


def disabled_tools() -> frozenset[str]:
    return frozenset(ToolSetting.objects.filter(is_enabled=False).values_list("name", flat=True))


def _resolve(configuration: Configuration) -> ConfigurationParts:
    own = tuple(configuration_skills(configuration))
    return ConfigurationParts(
        fallbacks=tuple(configuration_fallbacks(configuration)),
        selection=snippet_selection(configuration.snippet_tags, catalog_token_of(configuration)),
        own_skills=own,
        skills=compose_skills(configuration, own),
        disabled_tools=disabled_tools(),
    )


# Everything below is keyed by the catalogue token (and the database alias): a write to any table a
# value was built from replaces the token, so a stale entry is never found again and ages out.
_BY_TOKEN = (
    "a write to any catalogue table replaces the catalogue token (database triggers), so an entry "
    "built under the old token is never looked up again and ages out"
)
_PARTS: LruCache[tuple[object, ...], ConfigurationParts] = cache_register(
    LruCache(256),
    name="configuration_parts",
    key="(database alias, configuration id, catalogue token, SKILL_BLOCK_MAX_BYTES)",
    invalidation=_BY_TOKEN,
)
_CONFIGURATIONS: LruCache[tuple[object, ...], Configuration] = cache_register(
    LruCache(256),
    name="step_configurations",
    key="(database alias, configuration id, catalogue token)",
    invalidation=_BY_TOKEN + "; the serving model's calibration is read by every claim and every API read "
    "of a configuration (gateway/apis/context.py), not cached",
)
_SELECTIONS: LruCache[tuple[object, ...], SnippetSelection] = cache_register(
    LruCache(1024),
    name="snippet_selections",
    key="(database alias, catalogue token, the configuration's tags in order)",
    invalidation=_BY_TOKEN,
)


def configuration_parts(configuration: Configuration) -> ConfigurationParts:
    """What ``configuration`` resolves to; from this worker's cache when it carries a catalogue
    token (the objects are shared between threads and only ever read)."""
    catalog = catalog_token_of(configuration)
    if catalog is None or configuration.pk is None:
        return _resolve(configuration)
    key = (connection.alias, configuration.pk, catalog, int(settings.SKILL_BLOCK_MAX_BYTES))
    return _PARTS.get_or_build(key, lambda: _resolve(configuration))


def snippet_selection(tags: Sequence[str], catalog: str | None) -> SnippetSelection:
    """:func:`snippets.selectors.snippet_select`, from this worker's cache under ``catalog``."""
    if catalog is None:
        return snippet_select(tags=tags)
    key = (connection.alias, catalog, tuple(tags))
    return _SELECTIONS.get_or_build(key, lambda: snippet_select(tags=tags))


def step_configuration(
    *, configuration_id: int, catalog: str | None, calibration: tuple[float, int]
) -> Configuration:
    """The configuration with its serving model and provider for a claimed step (or an API request:
    ``gateway.apis.context.client_configuration``).

    The claim reads the run, the token and the serving model's calibration in one statement; the
    configuration graph comes from the cache, built once per token. Every caller gets its own copies
    (the model carrying the calibration it read), so shared objects are never changed.
    """

    def load() -> Configuration:
        return Configuration.objects.select_related("model__provider", "trusted_model__provider").get(
            pk=configuration_id
        )

    if catalog is None:
        shared = load()
    else:
        shared = _CONFIGURATIONS.get_or_build((connection.alias, configuration_id, catalog), load)
    configuration = copy.copy(shared)
    model = copy.copy(shared.model)
    model.calibration_factor, model.calibration_samples = calibration
    configuration.model = model
    setattr(configuration, CATALOG_TOKEN, catalog)
    return configuration
