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
from governance.policy import decide
from governance.vocabulary import Enforcement, EnforcementMode, Outcome


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
class Declassification:
    """A configuration whose answers are declared deliverable down to ``zone`` (a recorded act)."""

    configuration: str
    zone: str


@dataclass(frozen=True)
class ReadinessReport:
    rows: tuple[ReadinessRow, ...]
    declassified: tuple[Declassification, ...] = ()

    @property
    def would_refuse(self) -> tuple[ReadinessRow, ...]:
        return tuple(row for row in self.rows if row.would_be == Outcome.REFUSED)

    @property
    def summary(self) -> dict[str, int]:
        return {
            "observe_rows": len({(row.kind, row.identifier) for row in self.rows}),
            "would_refuse": len(self.would_refuse),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "rows": [asdict(row) for row in self.rows],
            "summary": self.summary,
            "declassified_answers": [asdict(item) for item in self.declassified],
        }


def readiness_report(*, configurations: Iterable[Configuration]) -> ReadinessReport:
    """One row per (observe source, one of ``configurations`` that sends it), and every one of
    ``configurations`` whose answers are declassified. Admin and the command
    pass every configuration; an API client only those it may use. Inactive configurations count too:
    they can be re-activated, and promoting a row must be safe for them as well."""
    rows: list[ReadinessRow] = []
    declassified: list[Declassification] = []
    for configuration in configurations:
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
    return ReadinessReport(rows=tuple(rows), declassified=tuple(declassified))
