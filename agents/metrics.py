"""The runtime's Prometheus series, and the one-line recorders the runtime calls where events happen
(the provider calls' series, ``govctx_tokens_total`` among them, are in ``providers/metrics.py``).

Served by ``/metrics`` (``config/metrics.py``, which also explains the multiprocess mode). Every label
value is an identifier or a vocabulary value: provider identifiers and model ids from the catalogue,
step actions, termination reasons, failure classes, token types. Never content.

| series | labels | recorded by |
|---|---|---|
| ``govctx_steps_total`` | ``status`` (advanced, finished, skipped), ``termination_reason`` (when finished) | the step task |
| ``govctx_abandoned_sends_total`` | ``model``, ``charged`` (provider_reported, estimated) | ``agents/runtime/budget.py``, a send its reader left before the finish |
| ``govctx_broken_streams_total`` | ``model``, ``charged`` (provider_reported, estimated) | ``agents/runtime/budget.py``, a stream its provider broke after the first delta |
| ``govctx_run_requeues_total`` | ``action`` (requeued, failed), ``cause`` (lease_expired, lost) | the reaper |
| ``govctx_budget_refusals_total`` | ``kind`` (tokens, cost: the client's daily limit that did not fit) | ``agents/runtime/budget.py`` |
| ``govctx_untrusted_injection_flagged_total`` | ``rule`` (an injection rule's name) | ``agents/runtime/injection_screening.py``, an untrusted tool result screened |

Governance decisions and redactions are counted in ``governance/telemetry.py``; the gauges read at
scrape time (runs in flight, runs waiting) in ``agents/health.py``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter

from providers.metrics import Usage, tokens_counted

STEPS = Counter(
    "govctx_steps_total", "Step task executions by how they ended.", ["status", "termination_reason"]
)
REQUEUES = Counter(
    "govctx_run_requeues_total",
    "Runs the reaper requeued or ended, by why: an expired lease, or a step message lost.",
    ["action", "cause"],
)

ABANDONED_SENDS = Counter(
    "govctx_abandoned_sends_total",
    "Sends whose reader went away before their finish, charged what the provider reported or an "
    "estimate (charged: provider_reported, estimated).",
    ["model", "charged"],
)

BROKEN_STREAMS = Counter(
    "govctx_broken_streams_total",
    "Streams their provider broke after the first delta, charged what the provider reported or an "
    "estimate of the prompt and what had streamed (charged: provider_reported, estimated).",
    ["model", "charged"],
)

BUDGET_REFUSALS = Counter(
    "govctx_budget_refusals_total",
    "Sends refused because they did not fit their client's daily budget, by the limit (tokens, cost).",
    ["kind"],
)

INJECTION_FLAGGED = Counter(
    "govctx_untrusted_injection_flagged_total",
    "Untrusted tool results in which screening found injection-shaped text, by rule (a result found by "
    "several rules counts once for each).",
    ["rule"],
)


def injection_flagged(rules: Iterable[str]) -> None:
    for rule in rules:
        counter = _FLAGGED_BY_RULE.get(rule)
        if counter is None:
            counter = _FLAGGED_BY_RULE[rule] = INJECTION_FLAGGED.labels(rule=rule)
        counter.inc()


# Each rule's series, looked up once (a rule name is one of a fixed few).
_FLAGGED_BY_RULE: dict[str, Counter] = {}


# Series whose label values are all known start at zero, so that a rate over them exists at once.
for _status in ("advanced", "skipped"):
    STEPS.labels(status=_status, termination_reason="")
for _action in ("requeued", "failed"):
    for _cause in ("lease_expired", "lost"):
        REQUEUES.labels(action=_action, cause=_cause)
for _kind in ("tokens", "cost"):
    BUDGET_REFUSALS.labels(kind=_kind)


def step_counted(*, action: str, reason: str) -> None:
    """A step task's outcome: its action, and for ``finished`` the run's termination reason."""
    STEPS.labels(status=action, termination_reason=reason if action == "finished" else "").inc()


def abandoned_send_counted(*, model: str, usage: Usage, charged: str) -> None:
    """One send its reader abandoned (a stream closed or cancelled before its finish), its charged
    tokens counted in ``govctx_tokens_total`` as a finished call's are, and how they were known."""
    ABANDONED_SENDS.labels(model=model, charged=charged).inc()
    tokens_counted(model, usage)


def broken_stream_counted(*, model: str, usage: Usage, charged: str) -> None:
    """One stream its provider broke after the first delta (the prompt was processed, part of the
    reply sent), its charged tokens counted in ``govctx_tokens_total`` as a finished call's are, and
    how they were known."""
    BROKEN_STREAMS.labels(model=model, charged=charged).inc()
    tokens_counted(model, usage)


def reap_counted(*, action: str, cause: str) -> None:
    """One run the reaper requeued (``action="requeued"``) or ended (``"failed"``), and why."""
    REQUEUES.labels(action=action, cause=cause).inc()


def budget_refusal_counted(*, kind: str) -> None:
    """One send refused for its client's daily budget; ``kind`` names the limit (tokens, cost)."""
    BUDGET_REFUSALS.labels(kind=kind).inc()
