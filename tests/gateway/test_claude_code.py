"""Claude Code, unchanged and non-interactive, through ``ANTHROPIC_BASE_URL`` pointed at this service.

It completes a small scripted task with a tool call (the loopback fake answers a ``Bash`` tool_use,
Claude Code runs it and sends the result back through the service), and a prompt that holds a class
above the configuration's zone is refused with a readable message, nothing sent.

Claude Code is the npm package ``@anthropic-ai/claude-code``, installed by ``make coding-agents`` into
``.cache/coding-agents`` (or the folder ``CODING_AGENTS_DIR`` names). Without it (or without node)
these tests are skipped with the reason, unless ``REQUIRE_SERVICES=1`` (CI), which makes that a failure.
It is run with ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``, which leaves the base URL its only
destination, in a clean environment and an empty home folder.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from catalog.services import api_client_create
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.coding_agents import claude_code_executable
from tests.fakes.provider_server import Reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.coding_agent]

MARKER = "governed-hello"


@pytest.fixture
def served(fake_provider):
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        system_prompt="You are a careful coding assistant.",
        system_prompt_data_class=DataClass.EDITOR_CONTENT,
        identifier="coding",
    )
    issued = api_client_create(
        name="claude-code",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=DataClass.SOURCE_CODE,
        trust_zone=TrustZone.EXTERNAL_EU,
    )
    return configuration, issued.token


def claude(live_server, token: str, home, prompt: str, *, data_class: str | None = None) -> dict:
    """One non-interactive Claude Code run; its ``--output-format json`` result."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": f"{live_server.url}/api/anthropic",
        "ANTHROPIC_API_KEY": token,  # sent as x-api-key
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "4096",  # the model's output limit: a larger one is a 400
        "API_TIMEOUT_MS": "60000",
    }
    if data_class is not None:  # every message of the request is of this class
        env["ANTHROPIC_CUSTOM_HEADERS"] = f"X-Data-Class: {data_class}"
    done = subprocess.run(
        [claude_code_executable(), "-p", prompt, "--output-format", "json", "--model", "coding"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return json.loads(done.stdout)


def test_claude_code_completes_a_task_with_a_tool_call_through_the_service(
    live_server, fake_provider, served, tmp_path
):
    _, token = served
    fake_provider.script(
        Reply.tools(("toolu_1", "Bash", {"command": f"echo {MARKER}", "description": "Print a word"})),
        Reply(text=f"The command printed {MARKER}."),
    )

    result = claude(live_server, token, tmp_path, f"Run `echo {MARKER}` with the Bash tool")

    assert (result["is_error"], result["num_turns"]) == (False, 2), result
    assert result["result"] == f"The command printed {MARKER}."
    first, second = (request.body for request in fake_provider.requests)
    assert first["messages"][0] == {"role": "system", "content": "You are a careful coding assistant."}
    assert "Bash" in {tool["function"]["name"] for tool in first["tools"]}
    (result_message,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert result_message["tool_call_id"] == "toolu_1"
    assert result_message["content"].strip() == MARKER


def test_claude_code_is_refused_with_a_readable_message_when_the_prompt_is_above_the_zone(
    live_server, fake_provider, served, tmp_path
):
    _, token = served

    result = claude(
        live_server, token, tmp_path, "Rotate the vault master key.", data_class=DataClass.SECRET_ADJACENT
    )

    assert result["is_error"] is True
    assert result["api_error_status"] == 403
    # Claude Code shows the 403's message as it came: which source, which zone, why.
    assert result["result"].startswith("Failed to authenticate. API Error: 403 "), result["result"]
    assert (
        "may not be sent to zone external_eu: external_eu is less trusted than ceiling local"
        in (result["result"])
    )
    assert fake_provider.requests == []
    assert GovernanceEvent.objects.filter(decision="context_blocked").count() >= 1
