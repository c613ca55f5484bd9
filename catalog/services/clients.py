"""Writes for API clients (their tokens) and configurations."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from catalog.errors import InvalidScope
from catalog.models import ApiClient, Configuration, ConfigurationSkill
from catalog.scopes import SCOPES
from catalog.tokens import token_digest
from governance.actors import Actor
from governance.services import reclassification_guard
from governance.vocabulary import DataClass, TrustZone
from skills.selectors import skills_in_order

TOKEN_PREFIX = "gca_"


@dataclass(frozen=True)
class IssuedClient:
    client: ApiClient
    token: str  # shown once; only its digest is stored


@transaction.atomic
def api_client_create(
    *,
    name: str,
    scopes: list[str],
    configurations: list[Configuration] | None = None,
    default_input_data_class: DataClass = DataClass.EDITOR_CONTENT,
    trust_zone: TrustZone = TrustZone.EXTERNAL_GLOBAL,
) -> IssuedClient:
    """A new client and its token (shown once). ``trust_zone`` is where the client runs, so what
    the API shows it; the default is the strictest."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise InvalidScope(f"Unknown scopes: {', '.join(unknown)}.", extra={"known": list(SCOPES)})
    token, prefix, digest = _token_issue()
    client = ApiClient(
        name=name,
        token_prefix=prefix,
        token_digest=digest,
        scopes=sorted(set(scopes)),
        default_input_data_class=default_input_data_class,
        trust_zone=trust_zone,
    )
    client.full_clean()
    client.save()
    if configurations:
        client.configurations.set(configurations)
    return IssuedClient(client=client, token=token)


def _token_issue() -> tuple[str, str, str]:
    """A new token, its shown prefix and its stored digest."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token[:10], token_digest(token)


@transaction.atomic
def api_client_rotate_token(*, client: ApiClient) -> IssuedClient:
    """Replace the client's token: the old one stops authenticating at once, the client row (and the
    runs and events that point to it) stays. The new token is returned once; only its digest is kept."""
    token, client.token_prefix, client.token_digest = _token_issue()
    client.save(update_fields=["token_prefix", "token_digest"])
    return IssuedClient(client=client, token=token)


def configuration_save(
    *, configuration: Configuration, actor: Actor, skill_ids: Sequence[int] | None = None
) -> Configuration:
    """Validate and save ``configuration`` (new or changed), and with ``skill_ids`` make those skills
    its own, in that order. Raises ``ValidationError``, or ``ReclassifyForbidden`` when ``actor`` may
    not loosen its system prompt's classification, before anything is stored; a changed
    classification is a ``reclassified`` event."""
    with reclassification_guard(row=configuration, actor=actor):  # one transaction
        configuration.full_clean()
        configuration.save()
        if skill_ids is not None:
            _configuration_skills_set(configuration, skill_ids)
    return configuration


def _configuration_skills_set(configuration: Configuration, skill_ids: Sequence[int]) -> None:
    skills = skills_in_order(skill_ids=skill_ids)
    missing = sorted(set(skill_ids) - {skill.pk for skill in skills})
    if missing or len(set(skill_ids)) != len(skill_ids):
        raise ValidationError({"skill_list": f"Unknown or repeated skills: {missing or 'repeated'}."})
    if [link.skill_id for link in configuration.skill_links.order_by("position")] == list(skill_ids):
        return
    configuration.skill_links.all().delete()
    ConfigurationSkill.objects.bulk_create(
        ConfigurationSkill(configuration=configuration, skill=skill, position=position)
        for position, skill in enumerate(skills)
    )
