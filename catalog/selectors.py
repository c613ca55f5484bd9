"""Reads for the agents app."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, Prefetch, QuerySet, Subquery, prefetch_related_objects

from catalog.models import ApiClient, CatalogVersion, Configuration, ConfigurationFallback, LlmModel
from catalog.models.catalog import CATALOG_VERSION_ID
from catalog.models.sql import Statement, Table, converted_row
from governance.drafts import draft_values_apply, drafts_by, drafts_of
from governance.policy import Source, receiver_may_read
from governance.vocabulary import TrustZone, least_trusted
from skills.composition import skill_sources
from skills.models import Skill
from skills.selectors import skills_in_order
from snippets.composition import snippet_sources
from snippets.models import Snippet
from snippets.selectors import snippet_select

_M = TypeVar("_M", bound=Model)


def configuration_list() -> list[Configuration]:
    return list(
        Configuration.objects.select_related("model__provider").prefetch_related(
            "fallback_links__model__provider"
        )
    )


@dataclass(frozen=True)
class DraftedConfiguration:
    """A configuration as its draft would make it: the row (unsaved) and, when the draft changes
    them, its own skills in order (else None: the linked ones)."""

    configuration: Configuration
    skills: tuple[Skill, ...] | None


def configuration_drafted(
    *, configuration: Configuration, author_id: int | None
) -> DraftedConfiguration | None:
    """A fresh, unsaved copy of ``configuration`` with the draft by the user ``author_id`` (None:
    whoever wrote it) applied, or None when there is no such draft. For comparing in a preview, or for
    an evaluation of drafts (evaluations/services.py); never saved."""
    drafts = (
        drafts_of(Configuration) if author_id is None else drafts_by(model=Configuration, author_id=author_id)
    )
    draft = drafts.filter(object_id=str(configuration.pk)).first()
    if draft is None:
        return None
    drafted = Configuration.objects.select_related("model__provider").get(pk=configuration.pk)
    draft_values_apply(drafted, draft.values)
    skill_ids = draft.values.get("skill_list")
    skills = None if skill_ids is None else tuple(skills_in_order(skill_ids=skill_ids))
    return DraftedConfiguration(configuration=drafted, skills=skills)


def configuration_zone(
    configuration: Configuration,
    *,
    serving_model: LlmModel | None = None,
    fallbacks: Sequence[LlmModel] | None = None,
) -> TrustZone:
    """The zone a call for ``configuration`` goes to (docs/decisions/0001-fallbacks-are-models.md).

    The least trusted of the serving model's provider zone and every fallback's provider zone (one
    hop: fallbacks are models, they have no fallbacks of their own). ``serving_model`` defaults to
    the configuration's model, ``fallbacks`` to its fallback models as stored. Unknown or empty
    stored zones count as ``external_global``.
    """
    model = serving_model if serving_model is not None else configuration.model
    if fallbacks is None:
        fallbacks = configuration_fallbacks(configuration)
    return least_trusted([model.provider.zone, *(fallback.provider.zone for fallback in fallbacks)])


def configuration_fallbacks(configuration: Configuration) -> list[LlmModel]:
    """The fallback models in their order, with their providers: from the configuration's prefetch
    when it has one (``fallback_links__model__provider``), else in one query, kept on the
    configuration as that prefetch would be (Django's ``prefetch_related_objects`` fetches only
    what is not fetched yet)."""
    links = ConfigurationFallback.objects.select_related("model__provider")
    prefetch_related_objects([configuration], Prefetch("fallback_links", queryset=links))
    return [link.model for link in configuration.fallback_links.all()]


CATALOG_TOKEN = "catalog_token"


def with_catalog_token(queryset: QuerySet[_M]) -> QuerySet[_M]:
    """``queryset`` with the catalogue token annotated on each row, read in the same statement (so
    in the same snapshot) as the row itself; what a configuration resolves to is cached under it."""
    token = CatalogVersion.objects.filter(id=CATALOG_VERSION_ID).values("token")[:1]
    return queryset.annotate(**{CATALOG_TOKEN: Subquery(token)})


def catalog_token_of(instance: object) -> str | None:
    """The token ``with_catalog_token`` read with ``instance``, or None (then nothing is cached)."""
    token = getattr(instance, CATALOG_TOKEN, None)
    return token if isinstance(token, str) else None


def configuration_sources(
    configuration: Configuration,
    *,
    snippets: Sequence[Snippet] | None = None,
    skills: Iterable[Skill] | None = None,
) -> list[Source]:
    """The classified editor-owned sources of ``configuration`` in the order they are sent
    (docs/governance.md, "Sources"): the system prompt (an empty one sends nothing and is no source),
    the snippets, the skills.

    A send passes the snippets it selected and the skills it composed, so the governance check and
    the readiness report list sources the same way. Without them (the readiness report): the
    configuration's snippet selection and every skill linked to it, enabled or not, since enabling a
    skill must not make the report wrong. Per-request sources (caller context, task input, tool
    outputs) are the caller's to add.
    """
    if snippets is None:
        snippets = snippet_select(tags=configuration.snippet_tags).snippets
    if skills is None:
        skills = (link.skill for link in configuration.skill_links.select_related("skill__source"))
    return [*configuration.prompt_sources(), *snippet_sources(snippets), *skill_sources(skills)]


def configuration_list_for_client(*, api_client: ApiClient) -> QuerySet[Configuration]:
    """The configurations ``api_client`` may use, active or not, by identifier."""
    return (
        api_client.configurations.select_related("model__provider", "summary_model")
        .prefetch_related("fallback_links__model__provider")
        .order_by("identifier")
    )


def configuration_get_for_client(*, api_client: ApiClient, identifier: str) -> Configuration | None:
    """The configuration, or None when it is unknown **or** not allowed for ``api_client`` (the caller
    answers both alike, so a client cannot probe for configurations it may not use)."""
    configurations = configuration_list_for_client(api_client=api_client).filter(identifier=identifier)
    return with_catalog_token(configurations).first()


@dataclass(frozen=True)
class ClientConfigurationKey:
    """What one statement reads of a configuration a client may use: its id, the catalogue token (in
    the same snapshot) and its serving model's calibration, which the token does not cover."""

    configuration_id: int
    catalog: str | None
    calibration: tuple[float, int]


def api_client_by_token_digest(digest: str) -> ApiClient | None:
    """The client whose token has this digest, or None. Every API request reads it, so the statement
    is SQL text (``catalog/models/sql.py``), its row read through each field's converters as the ORM
    reads it."""
    row = _CLIENT_BY_DIGEST.row(connection, [digest])
    if row is None:
        return None
    fields = ApiClient._meta.concrete_fields
    values = converted_row(connection, DEFAULT_DB_ALIAS, fields, row)
    return ApiClient.from_db(DEFAULT_DB_ALIAS, [field.attname for field in fields], values)


def _client_by_digest(connection: BaseDatabaseWrapper) -> str:
    client = Table(ApiClient, connection)
    return f"SELECT {client.columns()} FROM {client.name} WHERE {client['token_digest']} = %s"


_CLIENT_BY_DIGEST = Statement(_client_by_digest)


def configuration_key_for_client(*, api_client: ApiClient, identifier: str) -> ClientConfigurationKey | None:
    """The key of the configuration, or None when it is unknown **or** not allowed for ``api_client``
    (as :func:`configuration_get_for_client`). The access is checked in this statement every time;
    the configuration itself comes from ``agents.runtime.parts.step_configuration`` under the token.
    Every request makes this read before its provider call, so it is SQL text
    (``catalog/models/sql.py``)."""
    row = _CONFIGURATION_KEY.row(connection, [CATALOG_VERSION_ID, api_client.pk, identifier])
    if row is None:
        return None
    pk, catalog, factor, samples = row
    return ClientConfigurationKey(pk, catalog if isinstance(catalog, str) else None, (factor, samples))


def _configuration_key(connection: BaseDatabaseWrapper) -> str:
    configuration, model = Table(Configuration, connection), Table(LlmModel, connection)
    link, version = Table(ApiClient.configurations.through, connection), Table(CatalogVersion, connection)
    token = f"SELECT {version['token']} FROM {version.name} WHERE {version['pk']} = %s"
    return (
        f"SELECT {configuration['pk']}, ({token}), {model['calibration_factor']}, {model['calibration_samples']} "
        f"FROM {configuration.name} "
        f"JOIN {link.name} ON {link['configuration']} = {configuration['pk']} "
        f"JOIN {model.name} ON {model['pk']} = {configuration['model']} "
        f"WHERE {link['apiclient']} = %s AND {configuration['identifier']} = %s "
        f"ORDER BY {configuration['pk']} LIMIT 1"
    )


_CONFIGURATION_KEY = Statement(_configuration_key)


def skills_usable_by(
    *, api_client: ApiClient | None, skill_ids: Sequence[int]
) -> tuple[list[Skill], list[int]]:
    """The skills with these ids that a request may name, in the given order, and the ids it may
    not: unknown, disabled, orphaned, or not visible to ``api_client`` (it lacks ``skills:read``, or
    the skill is classified above its trust zone). Callers answer the refused ids all alike, so a
    client cannot tell an invisible skill from one that does not exist. Without a client (an
    operator's run) every enabled skill may be named."""
    skills = skills_in_order(skill_ids=skill_ids)
    usable = [skill for skill in skills if skill.is_enabled and not skill.is_orphaned]
    if api_client is not None:
        readable = receiver_may_read([skill.as_source() for skill in usable], api_client.zone)
        may_read = "skills:read" in api_client.scopes
        usable = [skill for skill, ok in zip(usable, readable, strict=True) if ok and may_read]
    kept = {skill.pk for skill in usable}
    return usable, sorted({pk for pk in skill_ids if pk not in kept})
