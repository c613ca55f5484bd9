"""Who acts: a signed-in user, an API client, or a named process. Every write service takes one.

An actor is named in audit rows, in governance events and in history versions. Names only, never
content. A user is recorded as the history version's ``history_user``; an API client or a process
has no user row, so the version's change reason names it instead (``"updated by api_client:ci"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from django.contrib.auth.models import AbstractBaseUser, PermissionsMixin
from django.db import models
from django.http import HttpRequest

# Lowering a class, loosening a ceiling or relaxing enforce to observe needs the admin permission
# (users) or the API scope (clients).
RECLASSIFY_PERMISSION = "governance.reclassify"
CLASSIFY_SCOPE = "governance:classify"
MAX_LABEL_CHARS = 150
# django-simple-history's change reason column holds 100 characters.
MAX_CHANGE_REASON_CHARS = 100


class ActorKind(StrEnum):
    USER = "user"
    API_CLIENT = "api_client"
    SYSTEM = "system"


@dataclass(frozen=True)
class Actor:
    """One who acts. Build it with :meth:`of_user`, :meth:`of_api_client` or :meth:`system`.

    ``declassifies`` is what a client or a process was granted; a user's permission is asked of the
    user when needed (:attr:`may_declassify`), so building an actor costs no query.
    """

    kind: ActorKind
    name: str
    user: AbstractBaseUser | None = field(default=None, compare=False, repr=False)
    declassifies: bool = False

    @classmethod
    def of_user(cls, user: AbstractBaseUser) -> Actor:
        return cls(kind=ActorKind.USER, name=user.get_username(), user=user)

    @classmethod
    def of_api_client(cls, name: str, *, may_declassify: bool) -> Actor:
        return cls(kind=ActorKind.API_CLIENT, name=name, declassifies=may_declassify)

    @classmethod
    def system(cls, label: str, *, may_declassify: bool = False) -> Actor:
        """A process: a command, a task, the demo seed (``"seed_demo"``, ``"task:sync_skill_source"``)."""
        return cls(kind=ActorKind.SYSTEM, name=label, declassifies=may_declassify)

    @property
    def label(self) -> str:
        """``user:<username>``, ``api_client:<name>``, or a process's own label."""
        label = self.name if self.kind == ActorKind.SYSTEM else f"{self.kind.value}:{self.name}"
        return label[:MAX_LABEL_CHARS]

    @property
    def api_client(self) -> str:
        """The client's name when an API client acts, else ""."""
        return self.name if self.kind == ActorKind.API_CLIENT else ""

    @property
    def may_declassify(self) -> bool:
        """Whether this actor may lower a data class, loosen a ceiling or relax enforcement."""
        if self.user is not None:
            # A user model without permissions can grant none: fail closed.
            return isinstance(self.user, PermissionsMixin) and self.user.has_perm(RECLASSIFY_PERMISSION)
        return self.declassifies

    def change_reason(self, reason: str) -> str:
        """A history version's change reason: a user is its ``history_user``; anyone else is named here."""
        text = reason if self.user is not None else f"{reason} by {self.label}"
        return text[:MAX_CHANGE_REASON_CHARS]


# A process that names itself no better (prefer a specific label: "task:...", "command:...").
SYSTEM = Actor.system("system")


@runtime_checkable
class ActsAsActor(Protocol):
    """What an API authentication principal answers (``agents.models.ApiClient``)."""

    def as_actor(self) -> Actor: ...


def request_actor(request: HttpRequest) -> Actor:
    """Who acts in ``request``: the signed-in user (admin) or the authenticated API client.

    Precondition: the request passed authentication; an anonymous request has no actor.
    """
    principal = request.user
    if isinstance(principal, AbstractBaseUser):
        return Actor.of_user(principal)
    if isinstance(principal, ActsAsActor):
        return principal.as_actor()
    raise TypeError(f"{type(principal).__name__} cannot act: the request is not authenticated.")


def history_stamp(row: models.Model, *, actor: Actor, reason: str) -> None:
    """Name ``actor`` and ``reason`` on the history version the next save of ``row`` records."""
    row._history_user = actor.user  # type: ignore[attr-defined]
    row._change_reason = actor.change_reason(reason)  # type: ignore[attr-defined]
