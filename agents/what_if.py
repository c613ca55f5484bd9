"""What a governance change would do before it is saved: the sends it would refuse or newly allow.

A change (:data:`Change`) is a snippet's, skill's or configuration prompt's classification, a provider's
trust zone (the zone of every model it serves), an LLM model's provider (so its zone), an API client's
trust zone, a configuration's declassification of its answers, a snippet tag's rename or deletion,
or a snippet's deletion (which also list the snippets each configuration would stop or start
sending). :func:`what_if` decides every configuration (active or not, as the
readiness report does: one can be switched back on) the way a send decides it, twice: with the rows as
stored and with the change applied to unsaved copies. Its sources are
:func:`agents.selectors.configuration_sources`, its zone :func:`agents.runtime.plan.send_zone`, its
receiver :func:`agents.runtime.plan.send_receiver`, and where its own zone refuses and it names a
trusted model, the trusted model's zone (:func:`agents.runtime.plan.routes_to_trusted`); the verdict
is :func:`governance.policy.decide` under the enforcement mode in effect. Each configuration is decided
for the provider call alone (no receiver) and for each API client that may use it.

The most recent :data:`RUN_LIMIT` runs are decided the same way over what they were built from: their
pinned snippets and skills (the live rows' classification, as every step reads it), their task input
and caller context (a conversation's messages are not re-read), and the receiver zone stored on the run (a client's zone change reaches its next
run, not a stored one). A run whose pinned versions are gone from the history is counted, not decided.

Only what changes is listed. Nothing is saved, recorded or sent.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from agents.models import AgentRun, ApiClient, Configuration, Provider
from agents.runtime.pins import pinned_content, run_pins
from agents.runtime.plan import SendRequest, receiver_name, routes_to_trusted, send_receiver, send_zone
from agents.selectors import configuration_fallbacks, configuration_sources, configuration_zone
from context_assembly.assembly import TASK_INPUT_IDENTIFIER, caller_context_identifier
from governance.policy import Receiver, Source, decide, enforcement_mode
from governance.vocabulary import Enforcement, SourceKind, TrustZone
from snippets.models import Snippet, normalise_tag
from snippets.selectors import snippet_select

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

    @property
    def has_effect(self) -> bool:
        return bool(self.sends or self.runs or self.selections)

    @property
    def newly_refused(self) -> tuple[SendEffect, ...]:
        return tuple(effect for effect in self.sends if effect.newly_refused)

    @property
    def digest(self) -> str:
        """Names this effect: a confirmation of an effect that has changed since is shown again."""
        rows = [(e.configuration, e.client, e.before.key, e.after.key) for e in self.sends]
        runs = [(str(e.run), e.before.key, e.after.key) for e in self.runs]
        selections = [(e.configuration, e.leaving, e.joining) for e in self.selections]
        return hashlib.sha256(repr((rows, runs, selections)).encode()).hexdigest()[:32]


def what_if(change: Change | Sequence[Change], *, run_limit: int = RUN_LIMIT) -> WhatIf:
    """The sends and recent runs whose verdict ``change`` (or these changes together) would change."""
    before, after = _World.load(()), _World.load((change,) if not isinstance(change, Sequence) else change)
    sends = [
        SendEffect(configuration.identifier, name, zone, then, now, configuration.pk)
        for configuration in before.configurations.values()
        for name, zone, then, now in _client_verdicts(configuration, before, after)
        if then.key != now.key
    ]
    runs = list(AgentRun.objects.select_related("api_client").order_by("-created_at")[:run_limit])
    run_effects, unreadable = [], 0
    for run in runs:
        try:
            then, now = before.run_verdict(run), after.run_verdict(run)
        except LookupError:
            unreadable += 1
            continue
        if then.key != now.key:
            run_effects.append(
                RunEffect(
                    run.id,
                    before.configurations[run.configuration_id].identifier,
                    run.api_client.name if run.api_client else "",
                    TrustZone.parse(run.receiver_zone),
                    run.get_status_display(),
                    run.created_at,
                    then,
                    now,
                )
            )
    return WhatIf(
        tuple(sends),
        tuple(run_effects),
        runs_examined=len(runs),
        runs_unreadable=unreadable,
        run_limit=run_limit,
        selections=tuple(_selection_effects(before, after)),
    )


def _selection_effects(before: _World, after: _World) -> Iterable[SelectionEffect]:
    if not after.selection_changes:
        return
    for configuration in before.configurations.values():
        then = [s.identifier for s in before.selected(configuration)]
        now = [s.identifier for s in after.selected(configuration)]
        leaving = tuple(i for i in then if i not in now)
        joining = tuple(i for i in now if i not in then)
        if leaving or joining:
            yield SelectionEffect(configuration.identifier, leaving, joining, configuration.pk)


def _client_verdicts(
    configuration: Configuration, before: _World, after: _World
) -> Iterable[tuple[str, TrustZone | None, Verdict, Verdict]]:
    changed = after.configurations[configuration.pk]
    yield (
        PROVIDER_CALL,
        None,
        before.verdict(configuration, None, None),
        after.verdict(changed, None, None),
    )
    for client in before.clients.get(configuration.pk, ()):
        zone = after.client_zones[client.pk]
        yield (
            client.name,
            zone,
            before.verdict(configuration, client.zone, client),
            after.verdict(changed, zone, client),
        )


@dataclass(frozen=True)
class _World:
    """The configurations and clients as stored, or with ``change`` applied (unsaved copies)."""

    configurations: dict[int, Configuration]
    clients: dict[int, list[ApiClient]]  # by configuration
    client_zones: dict[int, TrustZone]
    changed: dict[tuple[str, str], Source]  # changed rows by (kind, identifier)
    stored_sources: dict[int, list[Source]]  # by configuration, read once
    selection_changes: tuple[TagChange | SnippetRemoval, ...] = ()

    @classmethod
    def load(cls, changes: Sequence[Change]) -> _World:
        configurations = {
            configuration.pk: configuration
            for configuration in Configuration.objects.select_related(
                "model__provider", "trusted_model__provider"
            )
            .prefetch_related("fallback_links__model__provider")
            .order_by("identifier")
        }
        clients: dict[int, list[ApiClient]] = {}
        zones = {}
        for client in ApiClient.objects.prefetch_related("configurations").order_by("name"):
            zones[client.pk] = client.zone
            for configuration in client.configurations.all():
                clients.setdefault(configuration.pk, []).append(client)
        changed = {}
        for change in changes:
            if isinstance(change, SourceChange):
                changed[(str(change.after.kind), change.after.identifier)] = change.after
            elif isinstance(change, ProviderZoneChange | ModelProviderChange):
                for configuration in configurations.values():
                    _provider_move(configuration, change)
            elif isinstance(change, ClientZoneChange):
                zones[change.row] = change.zone
            elif isinstance(change, DeclassificationChange) and change.configuration in configurations:
                declared = change.zone.value if change.zone is not None else ""
                configurations[change.configuration].answers_deliverable_to = declared
        selection_changes = tuple(c for c in changes if isinstance(c, TagChange | SnippetRemoval))
        return cls(configurations, clients, zones, changed, {}, selection_changes)

    def selected(self, configuration: Configuration) -> list[Snippet]:
        """The snippets ``configuration`` selects, with the tag and snippet changes applied."""
        tags = [normalise_tag(tag) for tag in configuration.snippet_tags]
        removed: set[int] = set()
        for change in self.selection_changes:
            if isinstance(change, SnippetRemoval):
                removed.add(change.snippet)
                continue
            # The snippets carrying the old name will carry the new one: a configuration selects them
            # where it names the new name, and no longer where it names the old one.
            tags = [change.name if tag == change.renamed_to else tag for tag in tags if tag != change.name]
        return [s for s in snippet_select(tags=tags).snippets if s.pk not in removed]

    def sources(self, sources: Sequence[Source]) -> list[Source]:
        if not self.changed:
            return list(sources)
        return [
            replace(self.changed[key], receiver_class=source.receiver_class)
            if (key := (str(source.kind), source.identifier)) in self.changed
            else source
            for source in sources
        ]

    def verdict(
        self,
        configuration: Configuration,
        zone: TrustZone | None,
        client: ApiClient | None,
        sources: Sequence[Source] | None = None,
    ) -> Verdict:
        if sources is None:
            if configuration.pk not in self.stored_sources:
                snippets = self.selected(configuration) if self.selection_changes else None
                self.stored_sources[configuration.pk] = configuration_sources(
                    configuration, snippets=snippets
                )
            sources = self.stored_sources[configuration.pk]
        return _decided(configuration, self.sources(sources), _receiver(configuration, zone, client))

    def run_verdict(self, run: AgentRun) -> Verdict:
        configuration = self.configurations[run.configuration_id]
        pins = run_pins(run)
        if pins:
            pinned = pinned_content(configuration=configuration, pins=pins)
            sources = configuration_sources(
                pinned.configuration(configuration), snippets=pinned.snippets, skills=pinned.skills.included
            )
        else:
            sources = configuration_sources(configuration)
        sources += _request_sources(run)
        zone = TrustZone.parse(run.receiver_zone)
        return self.verdict(configuration, zone, run.api_client, sources)


def _provider_move(configuration: Configuration, change: ProviderZoneChange | ModelProviderChange) -> None:
    """Apply ``change`` to every model ``configuration`` may call (in memory): a provider's new zone,
    or a model's new provider."""
    models = [configuration.model, *configuration_fallbacks(configuration)]
    if configuration.trusted_model is not None:
        models.append(configuration.trusted_model)
    for model in models:
        if isinstance(change, ProviderZoneChange) and model.provider_id == change.row:
            model.provider.trust_zone = change.zone.value
        elif isinstance(change, ModelProviderChange) and model.pk == change.model:
            model.provider = Provider.objects.get(pk=change.provider)


def _receiver(
    configuration: Configuration, zone: TrustZone | None, client: ApiClient | None
) -> Receiver | None:
    request = SendRequest(
        task_input="", input_data_class="", receiver_zone=zone, receiver_name=receiver_name(client)
    )
    return send_receiver(configuration, request)


def _decided(configuration: Configuration, sources: list[Source], receiver: Receiver | None) -> Verdict:
    mode = enforcement_mode()
    zone = send_zone(configuration, configuration_fallbacks(configuration))
    decision = decide(sources, zone, mode, receiver)
    trusted = configuration.trusted_model
    routed_to = ""
    if trusted is not None and trusted.pk != configuration.model_id and routes_to_trusted(decision):
        zone = configuration_zone(configuration, serving_model=trusted, fallbacks=())
        decision = decide(sources, zone, mode, receiver)
        routed_to = trusted.model_id
    refused = tuple(f"{item.kind}:{item.identifier}: {item.reason}" for item in decision.refused)
    return Verdict(decision.permitted, zone, routed_to if decision.permitted else "", refused)


def _request_sources(run: AgentRun) -> list[Source]:
    """The run's caller context and task input as the assembly classifies them."""
    sources = [
        Source(
            SourceKind.CALLER_CONTEXT,
            str(item.get("identifier") or caller_context_identifier(position)),
            str(item.get("data_class") or ""),
            None,
            Enforcement.ENFORCE,
        )
        for position, item in enumerate(run.caller_context or ())
        if isinstance(item, dict)
    ]
    if run.input_text:
        sources.append(
            Source(
                SourceKind.TASK_INPUT, TASK_INPUT_IDENTIFIER, run.input_data_class, None, Enforcement.ENFORCE
            )
        )
    return sources
