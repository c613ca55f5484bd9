"""The changes :func:`editors.what_if.what_if` is asked about, and the effects it answers with."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime

from governance.policy import Source
from governance.vocabulary import TrustZone

RUN_LIMIT = 50  # the recent runs a change is checked against, newest first
PROVIDER_CALL = ""  # the client of a row decided for the provider call alone, without a receiver


@dataclass(frozen=True)
class SourceChange:
    """A classified row (snippet, skill, configuration prompt) as it would be: ``after`` is its
    :meth:`governance.classified.ClassifiedBase.as_source` with the new classification."""

    after: Source


@dataclass(frozen=True)
class ZoneChange:
    row: int  # primary key
    zone: TrustZone


class ProviderZoneChange(ZoneChange):
    """A provider's trust zone, the zone of every model it serves."""


@dataclass(frozen=True)
class ModelProviderChange:
    """An LLM model moved to another provider, so into that provider's zone."""

    model: int  # primary key
    provider: int  # primary key


class ClientZoneChange(ZoneChange):
    """An API client's trust zone, where its answers are delivered."""


@dataclass(frozen=True)
class DeclassificationChange:
    """A configuration's answers declared deliverable down to ``zone`` (a recorded act)."""

    configuration: int  # primary key
    zone: TrustZone | None  # None: the declaration is cleared


@dataclass(frozen=True)
class TagChange:
    """A snippet tag renamed to ``renamed_to``, or deleted (None): the snippets carrying it leave the
    configurations that select it by its name, and join those that select the new name."""

    name: str
    renamed_to: str | None


@dataclass(frozen=True)
class SnippetRemoval:
    """A snippet deleted: it leaves every configuration that selects it."""

    snippet: int  # primary key


Change = (
    SourceChange
    | ProviderZoneChange
    | ModelProviderChange
    | ClientZoneChange
    | DeclassificationChange
    | TagChange
    | SnippetRemoval
)


@dataclass(frozen=True)
class Verdict:
    """How a send is decided: permitted or not, the zone it was decided for, the trusted model it is
    routed to (its model id, "" when it is not routed), and each refused source with its reason."""

    permitted: bool
    zone: TrustZone
    routed_to: str = ""
    refused: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[bool, str]:
        return self.permitted, self.routed_to

    def __str__(self) -> str:
        if not self.permitted:
            return "refused"
        return f"allowed on trusted model {self.routed_to}" if self.routed_to else "allowed"


@dataclass(frozen=True)
class SendEffect:
    """One configuration's send, for one API client (``client`` is :data:`PROVIDER_CALL` for the
    provider call alone), before and after the change."""

    configuration: str
    client: str
    client_zone: TrustZone | None
    before: Verdict
    after: Verdict
    configuration_id: int = 0  # primary key, for a link

    @property
    def newly_refused(self) -> bool:
        return self.before.permitted and not self.after.permitted


@dataclass(frozen=True)
class SelectionEffect:
    """The snippets one configuration would stop or start sending (identifiers, in selection order)."""

    configuration: str
    leaving: tuple[str, ...]
    joining: tuple[str, ...]
    configuration_id: int = 0  # primary key, for a link


@dataclass(frozen=True)
class RunEffect:
    run: uuid.UUID
    configuration: str
    client: str
    receiver_zone: TrustZone
    status: str
    created_at: datetime
    before: Verdict
    after: Verdict


@dataclass(frozen=True)
class WhatIf:
    sends: tuple[SendEffect, ...]  # by configuration, then client
    runs: tuple[RunEffect, ...]  # newest first
    runs_examined: int
    runs_unreadable: int  # recent runs whose pinned versions are gone: not decided
    run_limit: int = RUN_LIMIT
    selections: tuple[SelectionEffect, ...] = ()  # by configuration; only changed selections
    # Values of personal data found in the configurations' editor-owned sources: each raises its source
    # to personal_data in every send, whatever the change declares.
    personal_data_findings: int = 0

    @property
    def has_effect(self) -> bool:
        return bool(self.sends or self.runs or self.selections)

    @property
    def newly_refused(self) -> tuple[SendEffect, ...]:
        return tuple(effect for effect in self.sends if effect.newly_refused)

    @property
    def newly_allowed(self) -> tuple[SendEffect, ...]:
        return tuple(
            effect for effect in self.sends if effect.after.permitted and not effect.before.permitted
        )

    @property
    def routed_otherwise(self) -> tuple[SendEffect, ...]:
        """Sends allowed before and after, on another (or no longer on the) trusted model."""
        return tuple(effect for effect in self.sends if effect.before.permitted and effect.after.permitted)

    @property
    def digest(self) -> str:
        """Names this effect: a confirmation of an effect that has changed since is shown again."""
        rows = [(e.configuration, e.client, e.before.key, e.after.key) for e in self.sends]
        runs = [(str(e.run), e.before.key, e.after.key) for e in self.runs]
        selections = [(e.configuration, e.leaving, e.joining) for e in self.selections]
        return hashlib.sha256(repr((rows, runs, selections)).encode()).hexdigest()[:32]
