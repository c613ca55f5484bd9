"""Governance's Prometheus series (served by ``/metrics``, ``config/metrics.py``).

| series | labels | recorded by |
|---|---|---|
| ``govctx_governance_events_total`` | ``decision`` (the event's kind), ``outcome`` (enforced, observed) | every governance event written |
| ``govctx_redactions_total`` | ``kind`` (the redaction catalogue's kind, e.g. ``github_token``) | the redaction counts a send records |

Labels are vocabulary values only, never a source's name or any content.
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import Counter

EVENTS = Counter(
    "govctx_governance_events_total",
    "Governance events written, by decision and outcome.",
    ["decision", "outcome"],
)
REDACTIONS = Counter("govctx_redactions_total", "Secrets redacted, by kind.", ["kind"])


def governance_event_counted(*, decision: str, outcome: str) -> None:
    EVENTS.labels(decision=decision, outcome=outcome).inc()


def redactions_counted(counts: Mapping[str, int]) -> None:
    """``counts``: how many spans of each kind one send redacted."""
    for kind, count in counts.items():
        REDACTIONS.labels(kind=kind).inc(count)
