"""Small factories: valid rows with overridable fields. Each call makes unique identifiers."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from catalog.models import (
    Configuration,
    ConfigurationFallback,
    ConfigurationSkill,
    LlmModel,
    Provider,
    ProviderKind,
    Tokenizer,
)
from governance.actors import Actor
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill, SkillSourceKind, SkillTrustLevel
from skills.services import skill_classify, skill_enable, skill_source_create, skill_source_sync
from snippets.models import Snippet
from snippets.services import snippet_create, tags_resolve

# Factories set up rows as an operator would, legacy observe rows included.
TEST_ACTOR = Actor.system("test", may_declassify=True)

_sequence = itertools.count(1)


def provider_make(**fields: Any) -> Provider:
    n = next(_sequence)
    values: dict[str, Any] = {
        "identifier": f"provider-{n}",
        "name": f"Provider {n}",
        "kind": ProviderKind.LOCAL,
        "trust_zone": TrustZone.LOCAL,
    }
    values.update(fields)
    provider = Provider(**values)
    provider.full_clean()
    provider.save()
    return provider


def model_make(*, zone: str = TrustZone.LOCAL, provider: Provider | None = None, **fields: Any) -> LlmModel:
    n = next(_sequence)
    values: dict[str, Any] = {
        "provider": provider or provider_make(trust_zone=zone),
        "model_id": f"model-{n}",
        "context_window": 128_000,
        "max_output_tokens": 4_096,
        "tokenizer": Tokenizer.O200K_BASE,
    }
    values.update(fields)
    model = LlmModel(**values)
    model.full_clean()
    model.save()
    return model


def configuration_make(
    *, zone: str = TrustZone.LOCAL, fallback_zones: tuple[str, ...] = (), **fields: Any
) -> Configuration:
    n = next(_sequence)
    values: dict[str, Any] = {
        "identifier": f"configuration-{n}",
        "name": f"Configuration {n}",
        "system_prompt": "Be helpful.",
        "system_prompt_data_class": DataClass.PUBLIC_CONTENT,
        "system_prompt_ceiling": TrustZone.EXTERNAL_GLOBAL,
        "system_prompt_enforcement": Enforcement.ENFORCE,
    }
    values.update(fields)
    if "model" not in values:
        values["model"] = model_make(zone=zone)
    configuration = Configuration(**values)
    configuration.full_clean()
    configuration.save()
    for position, fallback_zone in enumerate(fallback_zones):
        ConfigurationFallback.objects.create(
            configuration=configuration, model=model_make(zone=fallback_zone), position=position
        )
    return configuration


def snippet_make(*, tags: tuple[str, ...] = (), **fields: Any) -> Snippet:
    n = next(_sequence)
    values: dict[str, Any] = {
        "identifier": f"snippet-{n}",
        "name": f"Snippet {n}",
        "text": f"Text of snippet {n}.",
        "data_class": DataClass.PUBLIC_CONTENT,
        "ceiling": TrustZone.EXTERNAL_GLOBAL,
    }
    values.update(fields)
    if values.get("enforcement") == Enforcement.OBSERVE:
        return _legacy_snippet(values, tags)
    values.pop("enforcement", None)
    return snippet_create(actor=TEST_ACTOR, tag_names=tags, **values)


def _legacy_snippet(values: dict[str, Any], tags: tuple[str, ...]) -> Snippet:
    """A snippet that predates classification: only the classification migration makes these, so
    it is written directly, as the migration would have left it."""
    snippet = Snippet(**values)
    snippet.full_clean()
    snippet.save()
    snippet.tags.set(tags_resolve(tags))
    return snippet


def skill_make(
    root: Path,
    *,
    name: str = "house-style",
    description: str = "Applies the house style.",
    body: str = "# Steps\n\nWrite plainly.\n",
    data_class: str = DataClass.PUBLIC_CONTENT,
    ceiling: str = TrustZone.EXTERNAL_GLOBAL,
    enforcement: str = Enforcement.ENFORCE,
    enabled: bool = True,
    acknowledge_findings: bool = False,
) -> Skill:
    """A skill ingested through the real sync from a local folder under ``root``, then classified."""
    folder = root / f"skills-{next(_sequence)}"
    target = folder / name / "SKILL.md"
    target.parent.mkdir(parents=True)
    target.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    source = skill_source_create(
        name=folder.name,
        kind=SkillSourceKind.LOCAL_FOLDER,
        path=str(folder),
        trust_level=SkillTrustLevel.FIRST_PARTY,
        default_data_class=DataClass.SECRET_ADJACENT,
        default_ceiling=TrustZone.LOCAL,
    )
    skill_source_sync(source_id=source.pk)
    skill = Skill.objects.get(source=source)
    skill = skill_classify(
        skill=skill, data_class=data_class, ceiling=ceiling, enforcement=enforcement, actor=TEST_ACTOR
    )
    if enabled:
        skill = skill_enable(skill=skill, actor=TEST_ACTOR, acknowledge_findings=acknowledge_findings)
    return skill


def configuration_skills_set(configuration: Configuration, skills: list[Skill]) -> None:
    for position, skill in enumerate(skills):
        ConfigurationSkill.objects.create(configuration=configuration, skill=skill, position=position)
