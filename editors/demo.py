"""The demo data ``make run`` serves: an offline local provider, models, configurations, evaluation
cases, a client (and, through :mod:`editors.demo_activity`, a few runs to read on the dashboard)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from axes.utils import reset as axes_reset
from django.contrib.auth import get_user_model
from django.db import transaction

from catalog.models import (
    ApiClient,
    Configuration,
    ConfigurationSkill,
    LlmModel,
    Provider,
    ProviderKind,
    Tokenizer,
)
from catalog.pricing import catalogue_prices
from catalog.scopes import SCOPES
from catalog.services import api_client_create, api_client_rotate_token
from editors.demo_activity import demo_cases_seed
from governance.actors import Actor
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill, SkillSource, SkillSourceKind, SkillTrustLevel
from skills.services import skill_enable, skill_source_create, skill_source_sync
from snippets.models import Snippet
from snippets.services import snippet_save

DEMO_ADMIN = "admin"
DEMO_SKILLS = Path(__file__).resolve().parent / "demo_content" / "skills"
# The offline provider's replies, by step (providers/local.py): asked about the tone of voice, it first
# looks up the tone snippets; asked to notify the editors, it calls the tool that waits for a person's
# approval; then, and to anything else (a completion, an evaluation case), it answers with text.
LOCAL_ANSWER = "Here is a draft in our house tone: short sentences, warm and direct."
LOCAL_SCRIPT = [
    {"when": "tone of voice", "tool_calls": [{"name": "snippets_by_tag", "arguments": {"tags": ["tone"]}}]},
    {
        "when": "notify the editors",
        "tool_calls": [{"name": "notify_editors", "arguments": {"message": "A draft is ready for review."}}],
    },
    {"text": LOCAL_ANSWER},
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
# Served by the offline model declared external_global: its "operations" snippet (internal
# configuration) is refused there, in the admin preview and through the API alike.
DEMO_EXTERNAL_CONFIGURATION = "demo-external"
# Served by the offline provider's embedding model: /api/openai/v1/embeddings without any key.
DEMO_EMBEDDINGS_CONFIGURATION = "demo-embeddings"
# Offers only notify_editors, a tool that waits for a person's approval (README, "Runs").
DEMO_APPROVALS_CONFIGURATION = "demo-approvals"


@dataclass(frozen=True)
class DemoCredentials:
    admin_username: str
    admin_password: str
    api_token: str


def _seed_snippets() -> None:
    """Create the demo snippets that are missing; an existing one is the editors' and stays as it is."""
    for identifier, name, tag, text, data_class in SNIPPETS:
        if Snippet.objects.filter(identifier=identifier).exists():
            continue
        snippet = Snippet(identifier=identifier, name=name, text=text, data_class=data_class)
        snippet.ceiling = DataClass(data_class).ceiling
        snippet_save(snippet=snippet, actor=SEED_ACTOR, reason="demo seed", tag_names=[tag])


def _seed_skills(configuration: Configuration, *, configuration_created: bool) -> None:
    """Ingest the demo skills once, enabling house-style and giving it to the demo configuration.
    Later starts leave the source, its skills and the configuration's skills as editors left them."""
    source = SkillSource.objects.filter(name="demo-skills").first()
    if source is None:
        source = skill_source_create(
            name="demo-skills",
            kind=SkillSourceKind.LOCAL_FOLDER,
            path=str(DEMO_SKILLS),
            trust_level=SkillTrustLevel.FIRST_PARTY,
            default_data_class=DataClass.PUBLIC_CONTENT,
            default_ceiling=TrustZone.EXTERNAL_GLOBAL,
        )
        skill_source_sync(source_id=source.pk, actor=SEED_ACTOR)
        skill_enable(skill=Skill.objects.get(source=source, name="house-style"), actor=SEED_ACTOR)
    house_style = Skill.objects.filter(source=source, name="house-style").first()
    if configuration_created and house_style is not None:
        ConfigurationSkill.objects.get_or_create(
            configuration=configuration, skill=house_style, defaults={"position": 0}
        )


def _seed_catalogue() -> tuple[LlmModel, LlmModel]:
    """The demo providers and models as shipped (updated in place, never recreated: runs and
    configurations point to them). Their switches (``is_active``) stay as an operator left them.
    Returns the local model and the offline model declared in an external zone, which serves the
    refusals demo without any key."""
    shipped = {
        "name": "Local (offline)",
        "kind": ProviderKind.LOCAL,
        "trust_zone": TrustZone.LOCAL,
        "options": {"script": LOCAL_SCRIPT},
    }
    local, _ = Provider.objects.update_or_create(identifier="local", defaults=shipped)
    # The same offline replies, declared as an external provider would be: governance treats it as
    # external_global, so what that zone may not see is refused before this "call".
    shipped = {**shipped, "name": "Offline, as an external provider", "trust_zone": TrustZone.EXTERNAL_GLOBAL}
    offline_external, _ = Provider.objects.update_or_create(identifier="offline-external", defaults=shipped)
    shipped = {
        "name": "OpenAI",
        "kind": ProviderKind.OPENAI_COMPATIBLE,
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "OPENAI_API_KEY",
        "trust_zone": TrustZone.EXTERNAL_GLOBAL,
    }
    openai, _ = Provider.objects.update_or_create(
        identifier="openai", defaults=shipped, create_defaults={**shipped, "is_active": False}
    )
    model, _ = LlmModel.objects.update_or_create(
        provider=local,
        model_id="local-echo",
        defaults={"context_window": 32_768, "max_output_tokens": 2_048, "tokenizer": Tokenizer.O200K_BASE},
    )
    LlmModel.objects.update_or_create(
        provider=openai,
        model_id="gpt-4o",
        defaults={
            "context_window": 128_000,
            "max_output_tokens": 16_384,
            "tokenizer": Tokenizer.O200K_BASE,
            **_shipped_prices("gpt-4o"),
        },
    )
    external_model, _ = LlmModel.objects.update_or_create(
        provider=offline_external,
        model_id="local-echo",
        defaults={"context_window": 32_768, "max_output_tokens": 2_048, "tokenizer": Tokenizer.O200K_BASE},
    )
    return model, external_model


def _seed_embeddings() -> Configuration:
    """The offline embedding model (deterministic vectors, providers/local.py) and its configuration,
    created when missing; an existing configuration is the editors' and stays as it is."""
    model, _ = LlmModel.objects.update_or_create(
        provider=Provider.objects.get(identifier="local"),
        model_id="local-embed",
        defaults={
            "context_window": 8_192,
            "max_output_tokens": 1,
            "tokenizer": Tokenizer.O200K_BASE,
            "embeds": True,
            "embedding_dimensions": 256,
        },
    )
    configuration, _ = Configuration.objects.get_or_create(
        identifier=DEMO_EMBEDDINGS_CONFIGURATION,
        defaults={
            "name": "Demo embeddings (offline vectors)",
            "model": model,
            "system_prompt_data_class": DataClass.PUBLIC_CONTENT,
            "system_prompt_ceiling": TrustZone.EXTERNAL_GLOBAL,
        },
    )
    return configuration


def _shipped_prices(model_id: str) -> dict[str, Decimal | None]:
    prices = catalogue_prices(model_id)
    return prices.as_fields() if prices is not None else {}


def _seed_configurations(
    model: LlmModel, external_model: LlmModel
) -> tuple[Configuration, Configuration, bool]:
    """Create the demo configurations that are missing; existing ones are the editors' and stay."""
    configuration, created = Configuration.objects.get_or_create(
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
    external, _ = Configuration.objects.get_or_create(
        identifier=DEMO_EXTERNAL_CONFIGURATION,
        defaults={
            "name": "Demo on an external model (shows refusals in the preview and the API)",
            "model": external_model,
            "system_prompt": "You draft customer-facing answers.",
            "system_prompt_data_class": DataClass.PUBLIC_CONTENT,
            "system_prompt_ceiling": TrustZone.EXTERNAL_GLOBAL,
            "snippet_tags": ["tone", "operations"],
        },
    )
    Configuration.objects.get_or_create(
        identifier=DEMO_APPROVALS_CONFIGURATION,
        defaults={
            "name": "Demo of a tool that waits for approval (notify_editors)",
            "model": model,
            "system_prompt": "You help the editorial team and may notify the editors.",
            "system_prompt_data_class": DataClass.PUBLIC_CONTENT,
            "system_prompt_ceiling": TrustZone.EXTERNAL_GLOBAL,
            "allowed_tool_groups": [],
            "allowed_tools": ["notify_editors"],
        },
    )
    return configuration, external, created


def _seed_admin() -> str:
    """A fresh password for the demo admin, unlocked if failed logins had locked it out."""
    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    admin, _ = user_model.objects.get_or_create(username=DEMO_ADMIN, defaults={"email": "admin@example.com"})
    admin.is_staff = admin.is_superuser = True
    admin.set_password(password)
    admin.save()
    axes_reset(username=DEMO_ADMIN)
    return password


def _seed_client(configurations: list[Configuration]) -> str:
    """The demo client with a new token. Its row is kept (runs and events point to it): the token
    is rotated, and its scopes, switch and configurations restored so the printed token works."""
    client = ApiClient.objects.filter(name=DEMO_CLIENT).first()
    if client is None:
        issued = api_client_create(name=DEMO_CLIENT, scopes=list(SCOPES), configurations=configurations)
        return issued.token
    client.scopes, client.is_active = sorted(SCOPES), True
    client.full_clean()
    client.save(update_fields=["scopes", "is_active"])
    client.configurations.add(*configurations)
    return api_client_rotate_token(client=client).token


@transaction.atomic
def demo_seed() -> DemoCredentials:
    """Create what is missing of the demo and issue fresh credentials; safe to run on every start.

    Rows other rows point to are updated in place, never deleted. What editors curate (snippets,
    configurations, the skills and their switches) is created once and then left as they leave it.
    A fresh admin password and API token are issued each time, since only their hashes are stored
    and they are shown once; the previous token stops working."""
    model, external_model = _seed_catalogue()
    configuration, external, created = _seed_configurations(model, external_model)
    _seed_snippets()
    _seed_skills(configuration, configuration_created=created)
    demo_cases_seed(configuration=configuration, external=external)
    password = _seed_admin()
    approvals = Configuration.objects.get(identifier=DEMO_APPROVALS_CONFIGURATION)
    token = _seed_client([configuration, external, approvals, _seed_embeddings()])
    return DemoCredentials(admin_username=DEMO_ADMIN, admin_password=password, api_token=token)
