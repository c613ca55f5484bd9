"""What a configuration sends whatever the request, resolved once per catalogue version in a worker.

A send needs the configuration's fallback models, its snippet selection, its own skills composed into
the skill block, and the disabled tools. All of it comes from catalogue tables whose every write
replaces the catalogue token (database triggers, ``agents.models.CatalogVersion``), so a worker may
reuse what it resolved for as long as the token read *in the same statement* as the configuration
(``agents.selectors.with_catalog_token``) is the same. A configuration without a token (read any other
way, or the token row is missing) is resolved anew at every send.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from agents.models import Configuration, LlmModel, ToolSetting
from agents.selectors import CATALOG_TOKEN, catalog_token_of, configuration_fallbacks
from skills.composition import SkillBlock, skill_block
from skills.models import Skill
from snippets.selectors import SnippetSelection, snippet_select


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
        selection=snippet_select(tags=configuration.snippet_tags),
        own_skills=own,
        skills=compose_skills(configuration, own),
        disabled_tools=disabled_tools(),
    )


class PartsCache:
    """Resolved parts per (database, configuration, catalogue token, skill budget). Bounded LRU;
    thread-safe. The objects it holds are shared between threads and only ever read."""

    def __init__(self, max_entries: int = 256) -> None:
        self._entries: OrderedDict[tuple[object, ...], ConfigurationParts] = OrderedDict()
        self._lock = threading.Lock()
        self._max_entries = max_entries

    def get(self, configuration: Configuration) -> ConfigurationParts:
        catalog = catalog_token_of(configuration)
        if catalog is None or configuration.pk is None:
            return _resolve(configuration)
        key = (connection.alias, configuration.pk, catalog, int(settings.SKILL_BLOCK_MAX_BYTES))
        with self._lock:
            parts = self._entries.get(key)
            if parts is not None:
                self._entries.move_to_end(key)
                return parts
        parts = _resolve(configuration)
        with self._lock:
            self._entries[key] = parts
            if len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return parts

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PARTS = PartsCache()


class StepConfigurations:
    """Configurations with their serving model and provider, per (database, id, catalogue token).

    The claim of a step reads the run, the token and the serving model's calibration in one
    statement; the configuration graph comes from here, built once per token. Every caller gets its
    own copies (the model carrying the calibration it read), so shared objects are never changed.
    """

    def __init__(self, max_entries: int = 256) -> None:
        self._entries: OrderedDict[tuple[object, ...], Configuration] = OrderedDict()
        self._lock = threading.Lock()
        self._max_entries = max_entries

    def get(
        self, *, configuration_id: int, catalog: str | None, calibration: tuple[float, int]
    ) -> Configuration:
        key = (connection.alias, configuration_id, catalog)
        with self._lock:
            shared = self._entries.get(key) if catalog is not None else None
            if shared is not None:
                self._entries.move_to_end(key)
        if shared is None:
            shared = Configuration.objects.select_related("model__provider").get(pk=configuration_id)
            if catalog is not None:
                with self._lock:
                    self._entries[key] = shared
                    if len(self._entries) > self._max_entries:
                        self._entries.popitem(last=False)
        configuration = copy.copy(shared)
        model = copy.copy(shared.model)
        model.calibration_factor, model.calibration_samples = calibration
        configuration.model = model
        setattr(configuration, CATALOG_TOKEN, catalog)
        return configuration


STEP_CONFIGURATIONS = StepConfigurations()


def step_configuration(
    *, configuration_id: int, catalog: str | None, calibration: tuple[float, int]
) -> Configuration:
    return STEP_CONFIGURATIONS.get(
        configuration_id=configuration_id, catalog=catalog, calibration=calibration
    )
