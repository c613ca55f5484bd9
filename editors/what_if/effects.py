"""How :func:`what_if` decides every configuration and recent run before and after a change (the
package's docstring says how)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from agents.models import AgentRun
from agents.runtime.pins import pinned_content, run_pins
from agents.runtime.plan import receiver_name, routes_to_trusted, send_receiver, send_zone
from agents.runtime.request import SendRequest
from catalog.models import ApiClient, Configuration, Provider
from catalog.readiness import source_findings
from catalog.selectors import configuration_fallbacks, configuration_sources, configuration_zone
from context_assembly.assembly import TASK_INPUT_IDENTIFIER, caller_context_identifier
from editors.what_if.changes import (
    PROVIDER_CALL,
    RUN_LIMIT,
    Change,
    ClientZoneChange,
    DeclassificationChange,
    ModelProviderChange,
    ProviderZoneChange,
    RunEffect,
    SelectionEffect,
    SendEffect,
    SnippetRemoval,
    SourceChange,
    TagChange,
    Verdict,
    WhatIf,
)
from governance.policy import Receiver, Source, decide, enforcement_mode
from governance.screening import raised
from governance.vocabulary import Enforcement, SourceKind, TrustZone
from snippets.models import Snippet, normalise_tag
from snippets.selectors import snippet_select


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
    # A source several configurations send is one text: its values are counted once.
    distinct = {source: counts for found in after.findings.values() for source, counts in found.items()}
    findings = sum(count for counts in distinct.values() for count in counts.values())
    return WhatIf(
        tuple(sends),
        tuple(run_effects),
        runs_examined=len(runs),
        runs_unreadable=unreadable,
        run_limit=run_limit,
        selections=tuple(_selection_effects(before, after)),
        personal_data_findings=findings,
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
    # Personal data found in each configuration's editor-owned sources, by (kind, identifier).
    findings: dict[int, dict[tuple[str, str], dict[str, int]]] = field(default_factory=dict)

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
        return _decided(
            configuration,
            self.found_raised(configuration, self.sources(sources)),
            _receiver(configuration, zone, client),
        )

    def found_raised(self, configuration: Configuration, sources: Sequence[Source]) -> list[Source]:
        """``sources`` raised by the personal data their texts hold, as a send raises them (a
        reclassification below ``personal_data`` cannot let such a text through)."""
        if configuration.pk not in self.findings:
            self.findings[configuration.pk] = source_findings(configuration)
        found = self.findings[configuration.pk]
        if not found:
            return list(sources)
        return [raised(source, found.get((str(source.kind), source.identifier), {})) for source in sources]

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
