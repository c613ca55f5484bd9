"""OpenAI's Codex CLI on the Responses wire: what it sends is accepted and governed.

Codex always sends ``include: ["reasoning.encrypted_content"]``, ``store: false``, ``reasoning:
{"summary": "auto"}``, developer-role input messages, function tools beside a ``namespace`` of
functions and a ``web_search`` tool, and fields of its own (``prompt_cache_key``, ``client_metadata``).
The first test sends that request shape with the ``openai`` SDK; the last two run the real CLI
non-interactively (``codex exec``) against the live server and the loopback fake provider: a scripted
task with a tool call, and a refusal it shows readably. They are skipped, saying why, where the CLI is
not installed (``make codex`` installs it with npm).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import openai
import pytest

from catalog.services import api_client_create
from gateway.models import StoredResponse
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.coding_agents import codex_executable
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

EXEC_COMMAND = {
    "type": "function",
    "name": "exec_command",
    "description": "Runs a command.",
    "strict": False,
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}
NAMESPACE = {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.", "tools": []}


def served(fake_provider, *, default_class: str = DataClass.PUBLIC_CONTENT):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, identifier="coding")
    issued = api_client_create(
        name=f"codex-{default_class}",
        scopes=["configurations:use"],
        configurations=[configuration],
        default_input_data_class=default_class,
        trust_zone=TrustZone.LOCAL,
    )
    return configuration, issued.token


def test_the_request_codex_sends_is_accepted_and_only_function_tools_are_offered(live_server, fake_provider):
    _, token = served(fake_provider)
    fake_provider.script(Reply.tools(("call_1", "exec_command", {"cmd": "echo hi"})))
    client = openai.OpenAI(base_url=f"{live_server.url}/api/openai/v1", api_key=token, max_retries=0)

    events = list(
        client.responses.create(
            model="coding",
            input=[
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "Be brief."}],
                },
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Run echo hi"}],
                },
            ],
            tools=[EXEC_COMMAND, NAMESPACE, {"type": "web_search", "external_web_access": False}],
            tool_choice="auto",
            parallel_tool_calls=True,
            reasoning={"summary": "auto"},
            store=False,
            include=["reasoning.encrypted_content"],
            stream=True,
            prompt_cache_key="thread-1",
            extra_body={"client_metadata": {"x-codex-turn-metadata": "{}"}},
        )
    )

    completed = events[-1].response
    assert events[-1].type == "response.completed"
    assert [(item.type, item.name, item.arguments) for item in completed.output] == [
        ("function_call", "exec_command", '{"cmd":"echo hi"}')
    ]
    assert completed.model_extra["tools_not_offered"] == [
        {"type": "namespace", "name": "multi_agent_v1"},
        {"type": "web_search", "name": None},
    ]
    assert [tool.name for tool in completed.tools] == ["exec_command"]
    (request,) = fake_provider.requests
    assert [tool["function"]["name"] for tool in request.body["tools"]] == ["exec_command"]
    assert StoredResponse.objects.count() == 0  # store: false


def codex_binary() -> str:
    """The Codex CLI ``make coding-agents`` installs (tests/coding_agents.py); the tests that run it are
    marked ``coding_agent``, so tests/conftest.py skips them, saying why, when it is missing (and fails
    them under REQUIRE_SERVICES=1)."""
    return codex_executable()


def codex_exec(tmp_path: Path, base_url: str, token: str, prompt: str) -> subprocess.CompletedProcess[str]:
    """``codex exec`` non-interactively (docs: the README's client table), talking to ``base_url`` only."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(
        "\n".join(
            [
                'model = "coding"',
                'model_provider = "gateway"',
                "check_for_update_on_startup = false",
                "[model_providers.gateway]",
                'name = "governed gateway"',
                f'base_url = "{base_url}"',
                'env_key = "GATEWAY_TOKEN"',
                'wire_api = "responses"',
                "request_max_retries = 0",
                "stream_max_retries = 0",
                "stream_idle_timeout_ms = 60000",
                "[analytics]",
                "enabled = false",
                "[features]",
                "plugins = false",
            ]
        )
    )
    environment = {
        "PATH": "/usr/bin:/bin",
        "CODEX_HOME": str(home),
        "GATEWAY_TOKEN": token,
        "HOME": str(tmp_path),
    }
    command = [
        codex_binary(),
        "exec",
        "--strict-config",
        "--skip-git-repo-check",
        "--json",
        "-m",
        "coding",
        prompt,
    ]
    return subprocess.run(
        command,
        env=environment,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def jsonl(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.coding_agent
def test_codex_completes_a_scripted_task_with_a_tool_call(live_server, fake_provider, tmp_path):
    _, token = served(fake_provider)
    fake_provider.script(
        Reply.tools(("call_1", "exec_command", {"cmd": "echo governed-hello"})),
        Reply(text="It printed governed-hello."),
    )

    ran = codex_exec(tmp_path, f"{live_server.url}/api/openai/v1", token, "Run `echo governed-hello`")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    items = [event["item"] for event in jsonl(ran.stdout) if event["type"] == "item.completed"]
    commands = [item for item in items if item["type"] == "command_execution"]
    assert [(c["exit_code"], c["aggregated_output"].strip()) for c in commands] == [(0, "governed-hello")]
    assert [item["text"] for item in items if item["type"] == "agent_message"] == [
        "It printed governed-hello."
    ]
    first, second = fake_provider.bodies()
    assert "exec_command" in [tool["function"]["name"] for tool in first["tools"]]
    results = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["call_1"] and "governed-hello" in results[0]["content"]


@pytest.mark.coding_agent
def test_codex_shows_a_refusal_readably_and_nothing_is_sent(live_server, fake_provider, tmp_path):
    _, token = served(fake_provider, default_class=DataClass.SECRET_ADJACENT)

    ran = codex_exec(tmp_path, f"{live_server.url}/api/openai/v1", token, "Run `echo hi`")

    assert ran.returncode == 1
    failed = [event for event in jsonl(ran.stdout) if event["type"] == "turn.failed"]
    assert len(failed) == 1
    assert "403 Forbidden" in failed[0]["error"]["message"]
    assert "may not be sent to zone external_eu" in failed[0]["error"]["message"]
    assert fake_provider.requests == []
