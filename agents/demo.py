"""The demo data ``make run`` serves: an offline local provider, models, a configuration, a client."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from agents.models import (
    ApiClient,
    Configuration,
    ConfigurationSkill,
    LlmModel,
    Provider,
    ProviderKind,
    Tokenizer,
)
from agents.scopes import SCOPES
from agents.services import api_client_create
from governance.actors import Actor
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill, SkillSource, SkillSourceKind, SkillTrustLevel
from skills.services import skill_enable, skill_source_create, skill_source_sync
from snippets.models import Snippet
from snippets.services import snippet_save

DEMO_ADMIN = "admin"
DEMO_SKILLS = Path(__file__).resolve().parent / "demo_content" / "skills"
# The offline provider's replies, by step: look up the tone snippets, then answer.
LOCAL_SCRIPT = [
    {"tool_calls": [{"name": "snippets_by_tag", "arguments": {"tags": ["tone"]}}]},
    {"text": "Here is a draft in our house tone: short sentences, warm and direct."},
]
SNIPPETS = [
    (
        "tone-of-voice",
        "Tone of voice",
        "tone",
        "Warm, direct and brief. No jargon.",
        DataClass.PUBLIC_CONTENT,
    ),
    ("legal-disclaimer", "Legal", "legal", "Never promise delivery dates.", DataClass.EDITOR_CONTENT),
    (
        "incident-runbook",
        "Incident runbook",
        "operations",
        "Restart the queue workers before paging the on-call engineer.",
        DataClass.INTERNAL_CONFIGURATION,
    ),
]
DEMO_CLIENT = "demo-client"
# Re-seeding restores the demo rows as shipped, including their classification: a recorded change.
SEED_ACTOR = Actor.system("seed_demo", may_declassify=True)
DEMO_CONFIGURATION = "demo-assistant"


@dataclass(frozen=True)
class DemoCredentials:
    admin_username: str
    admin_password: str
    api_token: str


def _seed_snippets() -> None:
    for identifier, name, tag, text, data_class in SNIPPETS:
        snippet = Snippet.objects.filter(identifier=identifier).first() or Snippet(identifier=identifier)
        snippet.name, snippet.text, snippet.data_class = name, text, data_class
        snippet.ceiling = DataClass(data_class).ceiling
        snippet_save(snippet=snippet, actor=SEED_ACTOR, reason="demo seed", tag_names=[tag])


def _seed_skills(configuration: Configuration) -> None:
    source = SkillSource.objects.filter(name="demo-skills").first() or skill_source_create(
        name="demo-skills",
        kind=SkillSourceKind.LOCAL_FOLDER,
        path=str(DEMO_SKILLS),
        trust_level=SkillTrustLevel.FIRST_PARTY,
        default_data_class=DataClass.PUBLIC_CONTENT,
        default_ceiling=TrustZone.EXTERNAL_GLOBAL,
    )
    skill_source_sync(source_id=source.pk, actor=SEED_ACTOR)
    house_style = Skill.objects.get(source=source, name="house-style")
    skill_enable(skill=house_style, actor=SEED_ACTOR)
    ConfigurationSkill.objects.get_or_create(
        configuration=configuration, skill=house_style, defaults={"position": 0}
    )


@transaction.atomic
def demo_seed() -> DemoCredentials:
    """Create or refresh the demo rows. Idempotent; issues a fresh admin password and API token
    each time, since only their hashes are stored and they are shown once."""
    local, _ = Provider.objects.update_or_create(
        identifier="local",
        defaults={
            "name": "Local (offline)",
            "kind": ProviderKind.LOCAL,
            "trust_zone": TrustZone.LOCAL,
            "options": {"script": LOCAL_SCRIPT},
        },
    )
    openai, _ = Provider.objects.update_or_create(
        identifier="openai",
        defaults={
            "name": "OpenAI",
            "kind": ProviderKind.OPENAI_COMPATIBLE,
            "base_url": "https://api.openai.com/v1",
            "api_key_env": "OPENAI_API_KEY",
            "trust_zone": TrustZone.EXTERNAL_GLOBAL,
            "is_active": False,
        },
    )
    model, _ = LlmModel.objects.update_or_create(
        provider=local,
        model_id="local-echo",
        defaults={"context_window": 32_768, "max_output_tokens": 2_048, "tokenizer": Tokenizer.O200K_BASE},
    )
    configuration, _ = Configuration.objects.update_or_create(
        identifier=DEMO_CONFIGURATION,
        defaults={
            "name": "Demo assistant",
            "model": model,
            "system_prompt": "You are a concise assistant for the editorial team.",
            "system_prompt_data_class": DataClass.PUBLIC_CONTENT,
            "system_prompt_ceiling": TrustZone.EXTERNAL_GLOBAL,
            "system_prompt_enforcement": Enforcement.ENFORCE,
            "snippet_tags": ["tone", "legal"],
            "allowed_tool_groups": ["content"],
            "context_usage_note": "tail",
        },
    )
    _seed_snippets()
    _seed_skills(configuration)
    external_model, _ = LlmModel.objects.update_or_create(
        provider=openai,
        model_id="gpt-4o",
        defaults={"context_window": 128_000, "max_output_tokens": 16_384, "tokenizer": Tokenizer.O200K_BASE},
    )
    Configuration.objects.update_or_create(
        identifier="demo-external",
        defaults={
            "name": "Demo on an external model (shows refusals in the preview)",
            "model": external_model,
            "system_prompt": "You draft customer-facing answers.",
            "system_prompt_data_class": DataClass.PUBLIC_CONTENT,
            "system_prompt_ceiling": TrustZone.EXTERNAL_GLOBAL,
            "snippet_tags": ["tone", "operations"],
        },
    )
    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    admin, _ = user_model.objects.get_or_create(username=DEMO_ADMIN, defaults={"email": "admin@example.com"})
    admin.is_staff = admin.is_superuser = True
    admin.set_password(password)
    admin.save()
    ApiClient.objects.filter(name=DEMO_CLIENT).delete()
    issued = api_client_create(name=DEMO_CLIENT, scopes=list(SCOPES), configurations=[configuration])
    return DemoCredentials(admin_username=DEMO_ADMIN, admin_password=password, api_token=issued.token)
