"""The readiness report: which ``observe`` rows would be refused if they were enforced, and where.

It lives in the agents app because it reads configurations (and through them snippets and skills);
the policy core below stays free of them. It runs the same :func:`governance.policy.decide` the
runtime runs, with every row enforced, for the zone each configuration actually sends to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from catalog.models import Configuration
from catalog.selectors import configuration_sources, configuration_zone
from governance.policy import Source, decide
from governance.screening import counted, found_in, raised
from governance.vocabulary import Enforcement, EnforcementMode, Outcome
from snippets.selectors import snippet_select


@dataclass(frozen=True)
class ReadinessRow:
    kind: str
    identifier: str
    data_class: str  # as declared; "" when undeclared
    ceiling: str  # as declared; "" when undeclared
    configuration: str
    zone: str
    would_be: str  # "allowed" or "refused" under enforcement
    reason: str


@dataclass(frozen=True)
class PersonalDataRow:
    """An editor-owned source of ``configuration`` whose text holds personal data: what was found (kinds
    and counts, never a value), its declared class, and whether a send to the configuration's zone
    would refuse it (found personal data raises its class; decision 0032)."""

    kind: str
    identifier: str
    data_class: str
    configuration: str
    zone: str
    found: dict[str, int]
    would_be: str


@dataclass(frozen=True)
class Declassification:
    """A configuration whose answers are declared deliverable down to ``zone`` (a recorded act)."""

    configuration: str
    zone: str


@dataclass(frozen=True)
class ReadinessReport:
    rows: tuple[ReadinessRow, ...]
    declassified: tuple[Declassification, ...] = ()
    personal_data: tuple[PersonalDataRow, ...] = ()

    @property
    def would_refuse(self) -> tuple[ReadinessRow, ...]:
        return tuple(row for row in self.rows if row.would_be == Outcome.REFUSED)

    @property
    def summary(self) -> dict[str, int]:
        return {
            "observe_rows": len({(row.kind, row.identifier) for row in self.rows}),
            "would_refuse": len(self.would_refuse),
            "personal_data_findings": sum(sum(row.found.values()) for row in self.personal_data),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "rows": [asdict(row) for row in self.rows],
            "summary": self.summary,
            "declassified_answers": [asdict(item) for item in self.declassified],
            "personal_data": [asdict(item) for item in self.personal_data],
        }


def readiness_report(*, configurations: Iterable[Configuration]) -> ReadinessReport:
    """One row per (observe source, one of ``configurations`` that sends it), and every one of
    ``configurations`` whose answers are declassified. Admin and the command
    pass every configuration; an API client only those it may use. Inactive configurations count too:
    they can be re-activated, and promoting a row must be safe for them as well."""
    rows: list[ReadinessRow] = []
    declassified: list[Declassification] = []
    personal_data: list[PersonalDataRow] = []
    for configuration in configurations:
        personal_data.extend(personal_data_rows(configuration))
        if configuration.answers_deliverable_to:
            declassified.append(
                Declassification(configuration.identifier, configuration.answers_deliverable_to)
            )
        observed = [s for s in configuration_sources(configuration) if s.enforcement == Enforcement.OBSERVE]
        if not observed:
            continue
        zone = configuration_zone(configuration)
        decision = decide(observed, zone, EnforcementMode.ENFORCE_ALL)
        for source, verdict in zip(observed, decision.sources, strict=True):
            rows.append(
                ReadinessRow(
                    kind=str(source.kind),
                    identifier=source.identifier,
                    data_class=source.data_class or "",
                    ceiling=source.ceiling or "",
                    configuration=configuration.identifier,
                    zone=zone.value,
                    would_be=verdict.outcome.value,
                    reason=verdict.reason,
                )
            )
    rows.sort(key=lambda row: (row.kind, row.identifier, row.configuration))
    declassified.sort(key=lambda item: item.configuration)
    personal_data.sort(key=lambda row: (row.kind, row.identifier, row.configuration))
    return ReadinessReport(
        rows=tuple(rows), declassified=tuple(declassified), personal_data=tuple(personal_data)
    )


def personal_data_rows(configuration: Configuration) -> list[PersonalDataRow]:
    """The sources of ``configuration`` (its prompt, selected snippets and linked skills) whose text
    holds personal data, each decided as a send would decide it once raised."""
    zone = configuration_zone(configuration)
    rows = []
    for source, text in _source_texts(configuration):
        found = counted(found_in(text))
        if not found:
            continue
        verdict = decide([raised(source, found)], zone, EnforcementMode.ENFORCE_ALL).sources[0]
        rows.append(
            PersonalDataRow(
                kind=str(source.kind),
                identifier=source.identifier,
                data_class=source.data_class or "",
                configuration=configuration.identifier,
                zone=zone.value,
                found=found,
                would_be=verdict.outcome.value,
            )
        )
    return rows


def source_findings(configuration: Configuration) -> dict[tuple[str, str], dict[str, int]]:
    """What the texts of ``configuration``'s editor-owned sources hold, by (source kind, identifier):
    kinds and counts, for the sources that hold any."""
    findings = {}
    for source, text in _source_texts(configuration):
        found = counted(found_in(text))
        if found:
            findings[(str(source.kind), source.identifier)] = found
    return findings


def _source_texts(configuration: Configuration) -> list[tuple[Source, str]]:
    snippets = snippet_select(tags=configuration.snippet_tags).snippets
    skills = [link.skill for link in configuration.skill_links.select_related("skill__source")]
    texts = [configuration.system_prompt] if configuration.system_prompt.strip() else []
    texts += ["\n".join([s.name, s.description, s.text]) for s in snippets]
    texts += ["\n".join([s.description, s.body]) for s in skills]
    sources = configuration_sources(configuration, snippets=snippets, skills=skills)
    return list(zip(sources, texts, strict=True))
