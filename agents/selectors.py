"""Reads for the agents app."""

from __future__ import annotations

from agents.models import Configuration, LlmModel
from governance.policy import Source
from governance.vocabulary import SourceKind, TrustZone, least_trusted
from skills.composition import skill_sources
from snippets.composition import snippet_sources
from snippets.selectors import snippet_select


def configuration_get(*, identifier: str) -> Configuration:
    return Configuration.objects.select_related("model__provider").get(identifier=identifier)


def configuration_list() -> list[Configuration]:
    return list(
        Configuration.objects.select_related("model__provider").prefetch_related(
            "fallback_links__model__provider"
        )
    )


def configuration_zone(configuration: Configuration, *, serving_model: LlmModel | None = None) -> TrustZone:
    """The zone a call for ``configuration`` goes to (DESIGN.md §4).

    The least trusted of the serving model's provider zone and every fallback's provider zone (one
    hop: fallbacks are models, they have no fallbacks of their own). ``serving_model`` defaults to
    the configuration's model. Unknown or empty stored zones count as ``external_global``.
    """
    model = serving_model if serving_model is not None else configuration.model
    zones = [model.provider.zone]
    zones.extend(link.model.provider.zone for link in configuration.fallback_links.all())
    return least_trusted(zones)


def configuration_sources(configuration: Configuration) -> list[Source]:
    """The classified editor-owned sources a configuration always sends (DESIGN.md §4).

    Per-request sources (caller context, task input, tool outputs) are added by the caller.
    An empty system prompt sends nothing and so is not a source. Snippets follow the selection order.
    """
    sources: list[Source] = []
    if configuration.system_prompt.strip():
        sources.append(
            Source(
                kind=SourceKind.SYSTEM_PROMPT,
                identifier=configuration.identifier,
                data_class=configuration.system_prompt_data_class,
                ceiling=configuration.system_prompt_ceiling,
                enforcement=configuration.system_prompt_enforcement,
            )
        )
    sources.extend(snippet_sources(snippet_select(tags=configuration.snippet_tags).snippets))
    sources.extend(
        skill_sources(link.skill for link in configuration.skill_links.select_related("skill__source"))
    )
    return sources
