"""Rows for a :class:`~tests.egress.world.World`, created the way the code allows.

New rows go through the services (snippets are created enforced, with their injection scan and
history); ``observe`` rows only exist for data that predates classification, so they are written
directly, as the classification migration left them. Skills are stored as an ingest would store them
(parsed from their SKILL.md, checksum included) without running a sync for each example.

Providers and models reuse the same identifiers, URLs and options in every example, so the adapter
pool's SDK clients (about 90 ms each to build) are built once per test function.
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass

import yaml
from django.contrib.auth.models import User

from catalog.models import (
    ApiClient,
    Configuration,
    ConfigurationFallback,
    ConfigurationSkill,
    LlmModel,
    Provider,
    Tokenizer,
)
from catalog.services import TOKEN_PREFIX, answers_declassify
from catalog.tokens import token_digest
from governance.actors import Actor
from governance.vocabulary import TrustZone
from skills.models import Skill, SkillSource, SkillSourceKind, SkillTrustLevel
from skills.parsing import parse_skill_md
from snippets.models import Snippet
from snippets.services import snippet_create, tags_resolve
from tests.egress import oracle
from tests.egress.world import BY_KIND, POOL, Classification, PoolRow, World
from tests.factories import TEST_ACTOR
from tests.fakes.provider_server import FakeProvider

CONFIGURATION = "egress-configuration"
MISSING_SKILL_ID = 2_000_000_000
_clients = itertools.count(1)


@dataclass(frozen=True)
class Base:
    """Rows every example of a test function shares (created once, before the first example): the
    pool of snippets and skills (:data:`tests.egress.world.POOL`) and a staff user."""

    fake: FakeProvider
    skills: tuple[Skill, ...]  # by pool index
    staff: User


def base_make(fake: FakeProvider) -> Base:
    source = SkillSource.objects.create(
        name="egress-skills",
        kind=SkillSourceKind.LOCAL_FOLDER,
        path="/egress/skills",
        trust_level=SkillTrustLevel.FIRST_PARTY,
        default_data_class="secret_adjacent",
        default_ceiling="local",
    )
    for row in POOL:
        _snippet(row)
    skills = tuple(_skill(row, source) for row in POOL)
    staff = User.objects.create_superuser(username="egress-admin", password="egress-admin-password")
    return Base(fake=fake, skills=skills, staff=staff)


@dataclass(frozen=True)
class Built:
    world: World
    base: Base
    configuration: Configuration
    client: ApiClient
    token: str
    model_ids: tuple[str, ...]  # by target index

    @property
    def request_skill_ids(self) -> list[int]:
        """The ids the request names: a pool skill's, or (``None``) an id that does not exist."""
        return [self.skill_id(n, index) for n, index in enumerate(self.world.request_skills)]

    def skill_id(self, position: int, index: int | None) -> int:
        return self.base.skills[index].pk if index is not None else MISSING_SKILL_ID + position


def with_canary(text: str, kind: str | None, *, sep: str = "\n") -> str:
    return text + (sep + BY_KIND[kind].context if kind is not None else "")


def planted(lead: str, mark: str, kind: str | None) -> str:
    """``lead`` and the part's marker word, then the canary's realistic line (when one is planted)."""
    return with_canary(f"{lead} {mark}.", kind)


def build(world: World, base: Base) -> Built:
    """The example's rows, in few statements (the pool is already there)."""
    models = _targets(world, base)
    configuration = Configuration.objects.create(**_configuration_fields(world, models[0]))
    ConfigurationFallback.objects.bulk_create(
        ConfigurationFallback(configuration=configuration, model=model, position=position)
        for position, model in enumerate(models[1:])
    )
    ConfigurationSkill.objects.bulk_create(
        ConfigurationSkill(configuration=configuration, skill=base.skills[index], position=position)
        for position, index in enumerate(world.own_skills)
    )
    if world.declassified_to is not None:  # a recorded act, by an actor allowed to
        actor = Actor.system("egress", may_declassify=True)
        answers_declassify(configuration=configuration, zone=TrustZone(world.declassified_to), actor=actor)
    client, token = _client(world, configuration)
    return Built(
        world=world,
        base=base,
        configuration=configuration,
        client=client,
        token=token,
        model_ids=tuple(model.model_id for model in models),
    )


def _client(world: World, configuration: Configuration) -> tuple[ApiClient, str]:
    """An API client as ``api_client_create`` issues it, as a receiver in the world's zone (staff set
    the zone; issuing does not)."""
    token = f"{TOKEN_PREFIX}egress-{next(_clients)}-{secrets.token_urlsafe(16)}"
    fields: dict[str, object] = {
        "name": f"egress-client-{next(_clients)}",
        "token_prefix": token[:10],
        "token_digest": token_digest(token),
        "scopes": sorted(world.client_scopes),
        "default_input_data_class": world.client_default_class,
    }
    if any(f.name == "trust_zone" for f in ApiClient._meta.get_fields()):
        fields["trust_zone"] = world.client_zone
    client = ApiClient.objects.create(**fields)
    client.configurations.add(configuration)
    return client, token


def _targets(world: World, base: Base) -> list[LlmModel]:
    """The serving model and its fallbacks. Identifiers, URLs and options repeat in every example, so
    the adapter pool's SDK clients (about 90 ms each to build) are built once per test function."""
    providers = Provider.objects.bulk_create(
        Provider(
            identifier=f"egress-t{index}-{target.kind}",
            name=f"Egress target {index}",
            kind=target.kind,
            base_url=base.fake.anthropic_base_url
            if target.kind == "anthropic"
            else base.fake.openai_base_url,
            trust_zone=target.zone,
            timeout_seconds=5,
            max_retries=0,
            is_active=target.provider_active,
        )
        for index, target in enumerate(world.targets)
    )
    return LlmModel.objects.bulk_create(
        LlmModel(
            provider=provider,
            model_id=f"egress-model-{index}",
            context_window=128_000,
            max_output_tokens=4_096,
            tokenizer=Tokenizer.O200K_BASE,
            is_active=target.model_active,
        )
        for index, (provider, target) in enumerate(zip(providers, world.targets, strict=True))
    )


def _configuration_fields(world: World, model: LlmModel) -> dict[str, object]:
    prompt = world.system_prompt
    return {
        "identifier": CONFIGURATION,
        "name": "Egress configuration",
        "model": model,
        "system_prompt": planted("You are careful.", oracle.marker(oracle.SYSTEM), world.system_canary),
        "system_prompt_data_class": prompt.data_class,
        "system_prompt_ceiling": prompt.ceiling,
        "system_prompt_enforcement": "observe" if prompt.observe else "enforce",
        "snippet_tags": list(world.configuration_tags),
        "skill_mode": "progressive" if world.progressive else "full",
        "allowed_tool_groups": list(world.tool_groups),
        "max_iterations": len(world.replies) + 1,
    }


def _snippet(row: PoolRow) -> Snippet:
    fields = {
        "identifier": f"egress-snippet-{row.index}",
        "name": with_canary(f"Snippet {row.index}", row.name_canary, sep=" "),
        "text": planted("Guidance", oracle.marker(oracle.SNIPPET, row.index), row.canary),
        "data_class": row.classification.data_class,
        "ceiling": row.classification.ceiling,
        "is_active": row.active,
    }
    tags = (row.tag, row.shared_tag)
    if not row.classification.observe:
        return snippet_create(actor=TEST_ACTOR, tag_names=tags, **fields)  # type: ignore[arg-type]
    snippet = Snippet(**fields, enforcement="observe")
    snippet.full_clean()
    snippet.save()
    snippet.tags.set(tags_resolve(tags))
    return snippet


def _skill(row: PoolRow, source: SkillSource) -> Skill:
    name = row.skill_name
    front = {"name": name, "description": f"Helps with {oracle.marker(oracle.SKILL_DESCRIPTION, row.index)}."}
    body = planted("# Steps\n\nWork through", oracle.marker(oracle.SKILL_BODY, row.index), row.canary)
    content = f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body}\n"
    parsed = parse_skill_md(content.encode(), path=f"{name}/SKILL.md", folder_name=name)
    return Skill.objects.create(
        source=source,
        path=f"{name}/SKILL.md",
        name=parsed.name,
        description=parsed.description,
        body=parsed.body,
        content=content,
        checksum=parsed.checksum,
        trust_level=SkillTrustLevel.FIRST_PARTY,
        is_enabled=row.active,
        **_classification(row.classification),
    )


def _classification(c: Classification) -> dict[str, str]:
    return {
        "data_class": c.data_class,
        "ceiling": c.ceiling,
        "enforcement": "observe" if c.observe else "enforce",
    }


def request_body(built: Built) -> dict[str, object]:
    """The body of a preview, completion or run request for the world's request."""
    world = built.world
    body: dict[str, object] = {
        "configuration": CONFIGURATION,
        "input": planted("Please help with", oracle.marker(oracle.TASK_INPUT), world.input_canary),
    }
    if world.input_class is not None:
        body["input_data_class"] = world.input_class
    if world.items:
        body["context"] = [
            {
                "name": with_canary(f"brief {oracle.marker(oracle.ITEM_NAME, i)}", item.name_canary, sep=" "),
                "text": planted("Context", oracle.marker(oracle.ITEM_TEXT, i), item.text_canary),
                "data_class": item.data_class,
            }
            for i, item in enumerate(world.items)
        ]
    if world.request_skills:
        body["skills"] = built.request_skill_ids
    return body
