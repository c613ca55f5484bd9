"""Governance's Prometheus series (served by ``/metrics``, ``config/metrics.py``), and the attributes
of its decision span (``config/tracing.py``).

| series | labels | recorded by |
|---|---|---|
| ``govctx_governance_decisions_total`` | ``outcome`` (permitted, observed, refused) | every decision before a send (:func:`governance.services.assert_permitted`) |
| ``govctx_governance_events_total`` | ``decision`` (the event's kind), ``outcome`` (enforced, observed) | every governance event written |
| ``govctx_redactions_total`` | ``kind`` (the redaction catalogue's kind, e.g. ``github_token``) | the redaction counts a send records |
| ``govctx_screening_actions_total`` | ``screener`` (``secrets``, ``personal_data``), ``action`` (``redact``, ``raise``, ``pseudonymize``, ``found_in_reply``), ``kind`` | every span a screener acted on in a send or its reply (``agents/runtime/screening_events.py``) |

A decision is ``permitted`` when every source was allowed, ``observed`` when it was permitted with
sources sent under ``observe``, and ``refused`` when nothing was sent (a refused source, or an observed
one whose event could not be written): the refusal rate is
``rate(govctx_governance_decisions_total{outcome="refused"}[5m]) / rate(govctx_governance_decisions_total[5m])``.
Every series whose label values are all known (the outcomes, the events' decisions and outcomes) is
present from the start at zero, so a rate over it exists before the first refusal.

Labels are vocabulary values only, never a source's name or any content. The ``governance.decision``
span (around :func:`governance.services.assert_permitted`) carries the zone, the mode and how many
sources were allowed, observed and refused; a refusal marks it failed with ``error.type``
``context_refused``.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry.util.types import AttributeValue
from prometheus_client import Counter

from governance.policy import ContextDecision
from governance.vocabulary import Decision, EventOutcome, Outcome

DECISION_OUTCOMES = ("permitted", "observed", "refused")
DECISIONS = Counter(
    "govctx_governance_decisions_total",
    "Governance decisions before a send, by outcome: permitted, observed (permitted, observe rows sent), refused.",
    ["outcome"],
)
EVENTS = Counter(
    "govctx_governance_events_total",
    "Governance events written, by decision and outcome.",
    ["decision", "outcome"],
)
REDACTIONS = Counter("govctx_redactions_total", "Secrets redacted, by kind.", ["kind"])

for _outcome in DECISION_OUTCOMES:
    DECISIONS.labels(outcome=_outcome)
for _decision in Decision.values:
    for _event_outcome in EventOutcome.values:
        EVENTS.labels(decision=_decision, outcome=_event_outcome)


def governance_decision_counted(decision: ContextDecision, *, unaccounted: bool = False) -> None:
    """One decision before a send, by its outcome; ``unaccounted``: an observed source's event could
    not be written, so the send is refused all the same."""
    if decision.refused or unaccounted:
        outcome = "refused"
    else:
        outcome = "observed" if decision.observed else "permitted"
    DECISIONS.labels(outcome=outcome).inc()


def governance_event_counted(*, decision: str, outcome: str) -> None:
    EVENTS.labels(decision=decision, outcome=outcome).inc()


def redactions_counted(counts: Mapping[str, int]) -> None:
    """``counts``: how many spans of each kind one send redacted."""
    for kind, count in counts.items():
        REDACTIONS.labels(kind=kind).inc(count)


SCREENING = Counter(
    "govctx_screening_actions_total",
    "Spans a screener acted on, by screener, action and kind (counts only, never content).",
    ["screener", "action", "kind"],
)


def screening_counted(screener: str, action: str, counts: Mapping[str, int]) -> None:
    """``counts``: how many spans of each kind ``screener`` acted on with ``action`` in one send."""
    for kind, count in counts.items():
        SCREENING.labels(screener=screener, action=action, kind=kind).inc(count)


def decision_span_attributes(decision: ContextDecision) -> Mapping[str, AttributeValue]:
    return {
        "govctx.governance.zone": decision.zone.value,
        "govctx.governance.mode": decision.mode.value,
        "govctx.governance.permitted": decision.permitted,
        "govctx.governance.sources.allowed": decision.count(Outcome.ALLOWED),
        "govctx.governance.sources.observed": decision.count(Outcome.OBSERVED),
        "govctx.governance.sources.refused": decision.count(Outcome.REFUSED),
    }
