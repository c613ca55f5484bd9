"""MCP tools on a real Celery worker, PostgreSQL and Redis: a run's step lists a real MCP server's
tools (built with the SDK, on loopback), calls one from the worker's synchronous code, and a server
stopped mid-run fails its call while the run completes."""

from __future__ import annotations

import threading

import pytest
import redis
from django.conf import settings

from agents.models import AgentRun, RunMessage, ToolCallRecord
from agents.services import run_create
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.mcp_servers import HttpMcpServer, http_server_make
from tests.fakes.provider_server import Reply, ToolCall
from tests.services.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_broker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()


def test_a_worker_calls_an_mcp_tool_and_a_stopped_server_fails_only_its_call(
    fake_provider, settings, tmp_path
):
    stopped = threading.Event()  # the second step's reply waits until the server is stopped
    fake_provider.script(
        Reply.tools(("c1", "mcp__tools__add", {"a": 20, "b": 22})),
        Reply(
            text="Adding once more.",
            tool_calls=(ToolCall("c2", "mcp__tools__add", {"a": 1, "b": 1}),),
            gate=stopped,
        ),
        Reply(text="Done."),
    )
    with HttpMcpServer() as server:
        settings.MCP_SERVER_URL_ALLOWLIST = [server.url]
        # Its annotations are trusted: `add` is read-only, so its second call runs although the first
        # call's result (untrusted) is in the context (decision 0040).
        http_server_make(server.url, annotations_trusted=True)
        configuration = fake_configuration(fake_provider, allowed_tool_groups=["mcp:tools"], max_iterations=5)
        env = {"MCP_SERVER_URL_ALLOWLIST": server.url}
        with celery_worker("mcp", log=tmp_path / "worker.log", env=env):
            run = run_create(
                configuration=configuration, input_text="Add them.", input_data_class=DataClass.PUBLIC_CONTENT
            )
            wait_for(
                lambda: RunMessage.objects.filter(run=run, tool_call_id="c1").exists(),
                timeout=60,
                what="the first call's result",
            )
            server.stop()
            stopped.set()
            wait_for(lambda: AgentRun.objects.get(id=run.id).is_terminal, timeout=60, what="the run to end")

    run.refresh_from_db()
    assert (run.status, run.termination_reason) == ("completed", "completed")
    results = dict(RunMessage.objects.filter(run=run, role="tool").values_list("tool_call_id", "content"))
    failure = "The tool failed: the tool server could not be reached (ConnectError)."
    assert results == {"c1": "42", "c2": failure}
    assert dict(ToolCallRecord.objects.filter(run=run).values_list("call_id", "status")) == {
        "c1": "completed",
        "c2": "failed",
    }
    assert list(GovernanceEvent.objects.filter(decision="tool_failed").values_list("reason", flat=True)) == [
        f"mcp__tools__add: {failure}"
    ]
