"""Writes for the agents app."""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass

from django.db import transaction

from agents.errors import InvalidScope
from agents.models import ApiClient, Configuration
from agents.scopes import SCOPES
from governance.vocabulary import DataClass, Enforcement

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "gca_"


@dataclass(frozen=True)
class IssuedClient:
    client: ApiClient
    token: str  # shown once; only its digest is stored


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def api_client_create(
    *,
    name: str,
    scopes: list[str],
    configurations: list[Configuration] | None = None,
    default_input_data_class: DataClass = DataClass.EDITOR_CONTENT,
) -> IssuedClient:
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise InvalidScope(f"Unknown scopes: {', '.join(unknown)}.", extra={"known": list(SCOPES)})
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    client = ApiClient(
        name=name,
        token_prefix=token[:10],
        token_digest=token_digest(token),
        scopes=sorted(set(scopes)),
        default_input_data_class=default_input_data_class,
    )
    client.full_clean()
    client.save()
    if configurations:
        client.configurations.set(configurations)
    return IssuedClient(client=client, token=token)


@dataclass(frozen=True)
class PromotionResult:
    promoted: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (identifier, reason)


def configuration_promote_enforcement(*, configurations: list[Configuration], actor: str) -> PromotionResult:
    """Switch the system-prompt classification of ``configurations`` to enforce.

    A row without a declared class and ceiling cannot be enforced; it is skipped with that reason,
    never silently. Each promotion is logged with the actor.
    """
    promoted: list[str] = []
    skipped: list[tuple[str, str]] = []
    for configuration in configurations:
        if configuration.system_prompt_enforcement == Enforcement.ENFORCE:
            skipped.append((configuration.identifier, "already enforced"))
            continue
        if not configuration.system_prompt_data_class or not configuration.system_prompt_ceiling:
            skipped.append((configuration.identifier, "declare a data class and a ceiling first"))
            continue
        changed = Configuration.objects.filter(
            pk=configuration.pk, system_prompt_enforcement=Enforcement.OBSERVE
        ).update(system_prompt_enforcement=Enforcement.ENFORCE)
        if changed:
            promoted.append(configuration.identifier)
            logger.info("configuration %s promoted to enforce by %s", configuration.identifier, actor)
        else:
            skipped.append((configuration.identifier, "changed concurrently"))
    return PromotionResult(promoted=tuple(promoted), skipped=tuple(skipped))
