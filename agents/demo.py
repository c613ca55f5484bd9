"""The demo data ``make run`` serves: an offline local provider, models, a configuration, a client."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from agents.models import ApiClient, Configuration, LlmModel, Provider, ProviderKind, Tokenizer
from agents.scopes import SCOPES
from agents.services import api_client_create
from governance.vocabulary import DataClass, Enforcement, TrustZone

DEMO_ADMIN = "admin"
DEMO_CLIENT = "demo-client"
DEMO_CONFIGURATION = "demo-assistant"


@dataclass(frozen=True)
class DemoCredentials:
    admin_username: str
    admin_password: str
    api_token: str


@transaction.atomic
def demo_seed() -> DemoCredentials:
    """Create or refresh the demo rows. Idempotent; issues a fresh admin password and API token
    each time, since only their hashes are stored and they are shown once."""
    local, _ = Provider.objects.update_or_create(
        identifier="local",
        defaults={"name": "Local (offline)", "kind": ProviderKind.LOCAL, "trust_zone": TrustZone.LOCAL},
    )
    Provider.objects.update_or_create(
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
