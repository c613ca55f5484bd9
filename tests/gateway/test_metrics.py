"""/metrics: a run on the loopback provider moves exactly the series it should; no label holds content."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from agents.models import AgentRun, RunStatus
from agents.services import run_create
from agents.tasks import reap_runs_task
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Enforcement, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.canaries import generate_canaries
from tests.factories import configuration_make, snippet_make
from tests.fakes.provider_server import Reply, ToolCall

pytestmark = pytest.mark.django_db

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
IDENTIFIER = re.compile(r"[A-Za-z0-9_.:+-]*")


def scrape() -> Samples:
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


class Delta:
    def __init__(self, before: Samples, after: Samples) -> None:
        self.before, self.after = before, after

    def __call__(self, name: str, **labels: str) -> float:
        key = (name, frozenset(labels.items()))
        return self.after.get(key, 0.0) - self.before.get(key, 0.0)

    def moved(self, prefix: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        return {
            key: self.after[key] - self.before.get(key, 0.0)
            for key in self.after
            if key[0].startswith(prefix) and self.after[key] != self.before.get(key, 0.0)
        }


def test_a_run_moves_steps_provider_calls_tokens_and_governance_events_by_exactly_its_own(
    fake_provider, django_capture_on_commit_callbacks
):
    snippet_make(identifier="tone", text="Warm and brief.", tags=("tone",))
    snippet_make(
        identifier="diagnostics",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
        enforcement=Enforcement.OBSERVE,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    provider = configuration.model.provider.identifier
    fake_provider.script(
        Reply(
            tool_calls=(ToolCall("c1", "snippets_by_tag", {"tags": ["tone"]}),),
            prompt_tokens=120,
            completion_tokens=7,
            cached_tokens=20,
        ),
        Reply(text="Done.", prompt_tokens=150, completion_tokens=4, cached_tokens=100),
    )
    canary = generate_canaries(23)[1]
    before = scrape()
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text=f"Go. {canary.context}")
    after = scrape()
    delta = Delta(before, after)

    assert (run.status, len(fake_provider.requests)) == ("completed", 2)
    assert delta("govctx_steps_total", status="advanced", termination_reason="") == 1
    assert delta("govctx_steps_total", status="finished", termination_reason="completed") == 1
    call = {"provider": provider, "model": "gpt-4o", "outcome": "ok"}
    assert delta("govctx_provider_calls_total", **call) == 2
    assert delta("govctx_provider_call_duration_seconds_count", **call) == 2
    assert delta("govctx_provider_call_duration_seconds_bucket", **call, le="+Inf") == 2
    assert delta("govctx_tokens_total", model="gpt-4o", type="prompt") == 270
    assert delta("govctx_tokens_total", model="gpt-4o", type="completion") == 11
    assert delta("govctx_tokens_total", model="gpt-4o", type="cached") == 120
    observed = GovernanceEvent.objects.filter(decision="context_blocked", outcome="observed").count()
    assert (
        delta("govctx_governance_events_total", decision="context_blocked", outcome="observed")
        == observed
        # The observed snippet at each step, and at step 1 the first reply too: its label came from it.
        == 3
    )
    events = {
        (key[0], dict(key[1]).get("decision")): value
        for key, value in delta.moved("govctx_governance_events_total").items()
    }
    assert sum(events.values()) == GovernanceEvent.objects.count()
    assert delta("govctx_runs_in_flight") == delta("govctx_runs_waiting") == 0
    for (name, labels), _ in after.items():
        if name.startswith("govctx_"):
            assert all(IDENTIFIER.fullmatch(value) for _, value in labels), (name, labels)
            assert not any(canary.secret in value or "Go." in value for _, value in labels)


def test_a_failed_provider_call_is_counted_by_its_failure_class_with_no_tokens(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply.failing(500, "upstream broke"))
    before = scrape()
    response = caller.post("/api/v1/completions", {"configuration": configuration.identifier, "input": "Go."})
    delta = Delta(before, scrape())
    assert response.status_code == 502
    failed = {
        "provider": configuration.model.provider.identifier,
        "model": "gpt-4o",
        "outcome": "server_error",
    }
    assert delta("govctx_provider_calls_total", **failed) == 1
    assert delta("govctx_provider_call_duration_seconds_count", **failed) == 1
    assert delta.moved("govctx_tokens_total") == {}
    assert delta.moved("govctx_steps_total") == {}


def test_redactions_are_counted_by_kind_as_their_events_record_them(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    canary = generate_canaries(29)[0]
    before = scrape()
    response = caller.post(
        "/api/v1/completions", {"configuration": configuration.identifier, "input": f"Go. {canary.context}"}
    )
    delta = Delta(before, scrape())
    assert response.status_code == 200
    (event,) = GovernanceEvent.objects.filter(decision="secret_redacted")
    count, kind = event.reason.split(" x ")
    assert delta.moved("govctx_redactions_total") == {
        ("govctx_redactions_total", frozenset({("kind", kind)})): float(count)
    }
    assert delta("govctx_governance_events_total", decision="secret_redacted", outcome="enforced") == 1


def test_runs_gauges_read_the_database_and_the_reaper_counts_requeues():
    configuration = configuration_make()
    waiting = run_create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )
    leased = run_create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
    )
    AgentRun.objects.filter(pk=waiting.pk).update(updated_at=timezone.now() - timedelta(seconds=42))
    AgentRun.objects.filter(pk=leased.pk).update(
        status=RunStatus.RUNNING,
        lease_owner="worker-1",
        lease_expires_at=timezone.now() + timedelta(minutes=5),
    )
    samples = scrape()
    assert samples[("govctx_runs_in_flight", frozenset())] == 1
    assert samples[("govctx_runs_waiting", frozenset())] == 1
    assert 42 <= samples[("govctx_oldest_waiting_run_seconds", frozenset())] < 47

    AgentRun.objects.filter(pk=leased.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    before = scrape()
    reap_runs_task()
    delta = Delta(before, scrape())
    assert delta("govctx_run_requeues_total", action="requeued", cause="lease_expired") == 1
    assert delta("govctx_runs_in_flight") == -1
    assert delta("govctx_runs_waiting") == 1
