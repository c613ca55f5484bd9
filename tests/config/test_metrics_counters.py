"""/metrics counts every governance decision by outcome, and series with known labels start at zero."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from governance.errors import ContextRefused
from governance.models import GovernanceEvent
from governance.policy import Source
from governance.services import EventContext, assert_permitted
from governance.vocabulary import (
    DataClass,
    Decision,
    Enforcement,
    EnforcementMode,
    EventOutcome,
    SourceKind,
    TrustZone,
)

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = EventContext(correlation_id="metrics-1")


def scrape(text: str | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = text if text is not None else Client(REMOTE_ADDR="127.0.0.1").get("/metrics").content.decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def decisions(samples: dict) -> dict[str, float]:
    return {
        labels[0][1]: value
        for (name, labels), value in samples.items()
        if name == "govctx_governance_decisions_total"
    }


def decide(*sources: Source) -> None:
    assert_permitted(
        sources=list(sources), zone=TrustZone.EXTERNAL_GLOBAL, context=CONTEXT, mode=EnforcementMode.PER_ROW
    )


def test_each_decision_is_counted_by_its_outcome():
    before = decisions(scrape())
    decide(Source(SourceKind.SNIPPET, "tone", DataClass.PUBLIC_CONTENT))
    decide(Source(SourceKind.SNIPPET, "legacy", DataClass.SOURCE_CODE, enforcement=Enforcement.OBSERVE))
    with pytest.raises(ContextRefused):
        decide(Source(SourceKind.SNIPPET, "runbook", DataClass.SYSTEM_DIAGNOSTICS))
    with pytest.raises(ContextRefused):
        decide(Source(SourceKind.SNIPPET, "keys", DataClass.SECRET_ADJACENT))
    after = decisions(scrape())
    assert {outcome: after[outcome] - before[outcome] for outcome in after} == {
        "permitted": 1,
        "observed": 1,
        "refused": 2,
    }
    assert GovernanceEvent.objects.count() == 3  # the observed source and the two refused ones


def test_a_fresh_process_shows_every_known_series_at_zero():
    """Nothing has happened in a new process: the decisions, the events by kind and outcome, the
    budget refusals and the reaper's actions are all there, at 0."""
    script = (
        "import django; django.setup(); import config.urls, agents.tasks; "
        "from prometheus_client import REGISTRY, generate_latest; print(generate_latest(REGISTRY).decode())"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    samples = scrape(result.stdout)
    assert decisions(samples) == {"permitted": 0, "observed": 0, "refused": 0}
    events = {
        labels: value for (name, labels), value in samples.items() if name == "govctx_governance_events_total"
    }
    kinds = {
        (("decision", decision), ("outcome", outcome))
        for decision in Decision.values
        for outcome in EventOutcome.values
    }
    assert set(events) == kinds  # every event kind, enforced and observed
    assert len(events) == 2 * len(Decision.values)  # every event kind x (enforced, observed)
    assert set(events.values()) == {0}
    assert (
        samples[
            ("govctx_governance_events_total", (("decision", "context_blocked"), ("outcome", "enforced")))
        ]
        == 0
    )
    assert samples[("govctx_budget_refusals_total", (("kind", "cost"),))] == 0
    assert samples[("govctx_run_requeues_total", (("action", "requeued"), ("cause", "lease_expired")))] == 0
    assert samples[("govctx_steps_total", (("status", "advanced"), ("termination_reason", "")))] == 0


def test_an_observed_source_whose_event_cannot_be_written_counts_as_refused(monkeypatch):
    def refuse_to_save(*args, **kwargs):
        raise RuntimeError("event log unavailable")

    monkeypatch.setattr(GovernanceEvent, "save", refuse_to_save)
    before = decisions(scrape())
    with pytest.raises(ContextRefused):
        decide(Source(SourceKind.SNIPPET, "legacy", DataClass.SOURCE_CODE, enforcement=Enforcement.OBSERVE))
    after = decisions(scrape())
    assert {outcome: after[outcome] - before[outcome] for outcome in after} == {
        "permitted": 0,
        "observed": 0,
        "refused": 1,
    }
