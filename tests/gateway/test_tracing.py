"""Spans: an API request's trace continues into the run, its steps, the governance decision, the fit
and each provider call, with GenAI attribute names and no content."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents.models import AgentRun
from agents.runtime.queue import RUN_STEP_TASK
from config.celery import app
from config.tracing import traced_span, tracing_install
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.canaries import generate_canaries
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply, ToolCall

EXPORTER = InMemorySpanExporter()


class _WhileTesting(SimpleSpanProcessor):
    """Exports only while a test of this module runs: the provider stays installed for the session
    (the API keeps the first one), and the other tests' spans need not pile up in memory."""

    enabled = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.enabled:
            super().on_end(span)


PROCESSOR = _WhileTesting(EXPORTER)
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on, into memory (installed once: the API keeps the first tracer provider)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        tracing_install([PROCESSOR])
    EXPORTER.clear()
    PROCESSOR.enabled = True
    yield EXPORTER
    PROCESSOR.enabled = False
    EXPORTER.clear()


def tree(finished: tuple[ReadableSpan, ...]) -> list[tuple[int, str]]:
    """(depth, name) in start order, depth-first from the spans whose parent is outside the list."""
    ids = {span.context.span_id for span in finished}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(finished, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent and span.parent.span_id in ids else None
        children.setdefault(parent, []).append(span)

    def walk(parent: int | None, depth: int) -> Iterator[tuple[int, str]]:
        for span in children.get(parent, []):
            yield depth, span.name
            yield from walk(span.context.span_id, depth + 1)

    return list(walk(None, 0))


@pytest.mark.django_db(transaction=True)
def test_a_run_requests_trace_holds_the_run_its_steps_decisions_fits_and_provider_calls(
    spans, fake_provider, make_caller
):
    snippet_make(identifier="tone", text="Warm and brief.", tags=("tone",))
    configuration = fake_configuration(fake_provider)
    caller = make_caller("runs:create", configurations=(configuration,))
    fake_provider.script(
        Reply(
            tool_calls=(ToolCall("c1", "snippets_by_tag", {"tags": ["tone"]}),),
            prompt_tokens=90,
            completion_tokens=6,
        ),
        Reply(text="Done.", prompt_tokens=120, completion_tokens=4, cached_tokens=64),
    )
    canary = generate_canaries(31)[2]
    response = caller.post(
        "/api/v1/runs",
        {"configuration": configuration.identifier, "input": f"Draft. {canary.context}"},
        headers={"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01"},
    )
    assert response.status_code == 202
    run = AgentRun.objects.get()
    assert run.status == "completed"
    finished = spans.get_finished_spans()
    assert tree(finished) == [
        (0, "POST /api/v1/runs"),
        (1, "invoke_agent"),
        (2, "run/agents.tasks.run_step_task"),
        (3, "step 0"),
        (4, "governance.decision"),
        (4, "fit"),
        (4, "chat gpt-4o"),
        (4, "run/agents.tasks.run_step_task"),
        (5, "step 1"),
        (6, "governance.decision"),
        (6, "fit"),
        (6, "chat gpt-4o"),
    ]
    assert {format(span.context.trace_id, "032x") for span in finished} == {TRACE_ID}
    (server,) = [span for span in finished if span.kind == trace.SpanKind.SERVER]
    assert format(server.parent.span_id, "016x") == CALLER_SPAN
    assert dict(server.attributes) == {
        "http.request.method": "POST",
        "http.route": "/api/v1/runs",
        "http.response.status_code": 202,
    }
    by_name = {}
    for span in finished:
        by_name.setdefault(span.name, []).append(dict(span.attributes))
    assert by_name["invoke_agent"] == [
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": configuration.identifier,
            "govctx.run.id": str(run.id),
        }
    ]
    assert by_name["step 0"] == [
        {
            "govctx.run.id": str(run.id),
            "govctx.step.index": 0,
            "govctx.context.used_tokens": 90,
            "govctx.context.used_tokens.provenance": "provider_reported",
            "govctx.context.window": 128_000,
            "govctx.step.status": "advanced",
        }
    ]
    assert by_name["step 1"][0]["govctx.step.status"] == "finished"
    assert by_name["step 1"][0]["govctx.run.termination_reason"] == "completed"
    assert by_name["chat gpt-4o"][1] == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "govctx.provider": configuration.model.provider.identifier,
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 4,
        "gen_ai.usage.cache_read.input_tokens": 64,
        "gen_ai.response.finish_reasons": ("stop",),
    }
    # Step 0 sends the system prompt and the input; step 1 its reply (labelled) and the tool's output too.
    assert [decision["govctx.governance.sources.allowed"] for decision in by_name["governance.decision"]] == [
        2,
        4,
    ]
    assert by_name["governance.decision"][0] == {
        "govctx.governance.zone": "local",
        "govctx.governance.mode": "per_row",
        "govctx.governance.permitted": True,
        "govctx.governance.sources.allowed": 2,
        "govctx.governance.sources.observed": 0,
        "govctx.governance.sources.refused": 0,
    }
    fit = by_name["fit"][0]
    assert (fit["govctx.fit.window"], fit["govctx.fit.overflow"]) == (128_000, False)
    values = [str(value) for span in finished for value in span.attributes.values()]
    assert not any(canary.secret in value or "Draft." in value for value in values)


@pytest.mark.django_db
def test_a_refused_completion_marks_the_decision_span_failed_and_makes_no_provider_span(
    spans, fake_provider, make_caller
):
    snippet_make(
        identifier="runbook",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    caller = make_caller("configurations:use", configurations=(configuration,))
    response = caller.post("/api/v1/completions", {"configuration": configuration.identifier, "input": "Go."})
    assert response.status_code == 403
    finished = spans.get_finished_spans()
    assert tree(finished) == [(0, "POST /api/v1/completions"), (1, "governance.decision")]
    decision = next(span for span in finished if span.name == "governance.decision")
    assert decision.status.status_code == trace.StatusCode.ERROR
    assert dict(decision.attributes) == {"error.type": "context_refused"}
    assert fake_provider.requests == []


def test_a_step_message_carries_the_trace_context_in_its_headers(spans):
    app.conf.task_always_eager = False  # publish to the in-memory broker instead of running in-process
    try:
        with traced_span("caller") as caller:
            app.tasks[RUN_STEP_TASK].apply_async(("a-run", 0))
        with app.connection_for_read() as connection:
            queue = connection.SimpleQueue("celery")
            message = queue.get(timeout=2)
            message.ack()
            queue.close()
    finally:
        app.conf.task_always_eager = True
    (producer,) = [span for span in spans.get_finished_spans() if span.kind == trace.SpanKind.PRODUCER]
    assert producer.name == "apply_async/agents.tasks.run_step_task"
    assert producer.parent.span_id == caller.get_span_context().span_id
    trace_id = format(caller.get_span_context().trace_id, "032x")
    version, traced, parent, flags = message.headers["traceparent"].split("-")
    assert (version, traced, parent) == ("00", trace_id, format(producer.context.span_id, "016x"))
    assert int(flags, 16) & 1  # sampled
