"""A real worker continues the trace its step message carries in its headers (console exporter)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis
from django.conf import settings
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agents.models import AgentRun
from agents.services import run_create
from config.tracing import traced_span, tracing_install
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
EXPORTER = InMemorySpanExporter()


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def printed_spans(log: Path) -> list[dict]:
    """The console exporter's spans in the worker's output (indented JSON objects between log lines)."""
    text, decoder, spans, position = log.read_text(), json.JSONDecoder(), [], 0
    while (start := text.find("\n{", position)) != -1:
        try:
            value, position = decoder.raw_decode(text, start + 1)
        except json.JSONDecodeError:
            position = start + 2
            continue
        if isinstance(value, dict) and "context" in value:
            spans.append(value)
    return spans


def test_the_worker_continues_the_trace_of_the_request_that_started_the_run(fake_provider, tmp_path):
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        tracing_install([SimpleSpanProcessor(EXPORTER)])
    EXPORTER.clear()
    fake_provider.script(Reply(text="Done.", prompt_tokens=30, completion_tokens=2))
    configuration = fake_configuration(fake_provider)
    log = tmp_path / "worker.log"
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "100"}
    with celery_worker("tracing", log=log, env=env):
        with traced_span("caller") as caller:
            run = run_create(
                configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT
            )
        wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")
        # The task's span ends last, after the step's and the call's: wait until it is printed too.
        expected = {"chat gpt-4o", "step 0", "run/agents.tasks.run_step_task"}
        wait_for(lambda: expected <= {s["name"] for s in printed_spans(log)}, timeout=30, what="spans")
    trace_id = f"0x{caller.get_span_context().trace_id:032x}"
    (producer,) = [s for s in EXPORTER.get_finished_spans() if s.kind == trace.SpanKind.PRODUCER]
    worker = {span["name"]: span for span in printed_spans(log)}
    consumer = worker["run/agents.tasks.run_step_task"]
    assert {span["context"]["trace_id"] for span in worker.values()} == {trace_id}
    assert consumer["parent_id"] == f"0x{producer.context.span_id:016x}"
    assert worker["step 0"]["parent_id"] == consumer["context"]["span_id"]
    assert worker["chat gpt-4o"]["parent_id"] == worker["step 0"]["context"]["span_id"]
    assert worker["chat gpt-4o"]["attributes"]["gen_ai.usage.input_tokens"] == 30
