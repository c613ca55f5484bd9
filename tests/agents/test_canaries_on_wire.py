"""The canary suite: secrets planted in every source kind never reach the recorded wire.

Canary values are drawn at test time in each documented shape (tests/canaries.py), so no literal
secret-shaped string lives in the repository. They include secrets hidden from pattern matching (an
invisible character inside, fullwidth letters, percent-escapes, a private key body without armour).
"""

from __future__ import annotations

import logging

import pytest

from agents.models import RunMessage
from agents.services import CallerContextItem
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration, run_to_end
from tests.canaries import generate_canaries
from tests.factories import configuration_skills_set, skill_make, snippet_make
from tests.fakes.provider_server import Reply
from tools.registry import REGISTRY, Tool, ToolEffect

pytestmark = pytest.mark.django_db

CANARIES = generate_canaries(seed=20261129)
SOURCE_KINDS = (
    "system_prompt",
    "snippet",
    "skill",
    "caller_context",
    "task_input",
    "tool_output",
    "model_reply",
)


def leaked(canary, text: str) -> list[str]:
    """Windows of the secret in ``text``, as written or revealed (invisible characters, fullwidth
    forms and percent-escapes undone)."""
    return canary.leaks(text)


@pytest.fixture
def canary_tool():
    tool = Tool(
        name="fetch_config",
        description="Fetch a configuration file.",
        parameters={"type": "object", "properties": {}},
        group="content",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: "\n".join(c.context for c in CANARIES),
    )
    REGISTRY.register(tool)
    yield tool
    REGISTRY.unregister(tool.name)


def plant(kind: str, fake, text: str, root):
    fields: dict = {"allowed_tools": ["fetch_config"]}
    run_kwargs: dict = {}
    replies = [Reply(text="done")]
    if kind == "system_prompt":
        fields["system_prompt"] = text
    elif kind == "snippet":
        # The canaries' lines hold e-mail addresses; the planted snippet keeps its class (recorded).
        snippet_make(identifier="planted", text=text, tags=("planted",), personal_data_override=True)
        fields["snippet_tags"] = ["planted"]
    elif kind == "skill":
        # Some canaries hide a token with Unicode tag characters, which the injection scan rightly
        # flags as high severity; an editor who acknowledges that still never sends the token.
        skills = [skill_make(root, body=text, acknowledge_findings=True)]
    elif kind == "caller_context":
        run_kwargs["caller_context"] = (CallerContextItem("notes", text, DataClass.PUBLIC_CONTENT),)
    elif kind == "task_input":
        run_kwargs["input_text"] = text
    elif kind == "tool_output":
        replies = [Reply.tools(("c1", "fetch_config", {})), Reply(text="done")]
    elif kind == "model_reply":
        replies = [Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]}), text=text), Reply(text="done")]
        fields["allowed_tool_groups"] = ["content"]
    fake.script(*replies)
    configuration = fake_configuration(fake, **fields)
    if kind == "skill":
        configuration_skills_set(configuration, skills)
    return configuration, run_kwargs


@pytest.mark.parametrize("kind", SOURCE_KINDS)
def test_no_canary_reaches_the_wire(
    kind, fake_provider, canary_tool, caplog, tmp_path, django_capture_on_commit_callbacks
):
    assert len({c.kind for c in CANARIES}) >= 25
    text = "\n".join(canary.context for canary in CANARIES)
    caplog.set_level(logging.DEBUG)
    configuration, run_kwargs = plant(kind, fake_provider, text, tmp_path)
    run = run_to_end(django_capture_on_commit_callbacks, configuration, **run_kwargs)
    assert run.status == "completed", (run.termination_reason, run.error_message)
    wire = fake_provider.wire_text()
    assert len(fake_provider.requests) >= 1
    leaks = {c.kind: leaked(c, wire) for c in CANARIES if leaked(c, wire)}
    assert leaks == {}
    assert wire.count("[REDACTED:") >= len(CANARIES)
    stored = " ".join(RunMessage.objects.filter(run=run).values_list("content", flat=True))
    events = str(list(GovernanceEvent.objects.values()))
    for canary in CANARIES:
        assert not leaked(canary, stored), canary.kind
        assert not leaked(canary, events), canary.kind
        assert not leaked(canary, caplog.text), canary.kind
    assert GovernanceEvent.objects.filter(decision="secret_redacted").exists()
