"""The preview assembles, decides and fits exactly like a send, and records and sends nothing."""

from __future__ import annotations

import pytest

from agents.runtime.preview import context_preview
from agents.runtime.request import SendRequest
from context_assembly.assembly import ContextItem
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import snippet_make

pytestmark = pytest.mark.django_db


def test_preview_shows_sources_outcomes_breakdown_and_reports(fake_provider):
    snippet_make(identifier="tone", name="Tone", text="Warm.", tags=("tone",))
    snippet_make(
        identifier="runbook",
        name="Runbook",
        text="Restart X.",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        system_prompt="Be kind.",
        snippet_tags=["tone", "ops", "nope"],
        allowed_tools=["ghost"],
    )
    token = "gh" + "p_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
    request = SendRequest(
        task_input=f"Deploy with {token}",
        input_data_class=DataClass.PUBLIC_CONTENT,
        caller_context=(ContextItem("brief", "Launch notes.", DataClass.EDITOR_CONTENT),),
    )
    preview = context_preview(configuration=configuration, request=request).as_dict(
        receiver_zone=TrustZone.LOCAL
    )
    assert preview["would_send"] is False
    assert preview["zone"] == "external_eu"
    assert [(s["kind"], s["identifier"], s["outcome"]) for s in preview["decision"]["sources"]] == [
        ("system_prompt", configuration.identifier, "allowed"),
        ("snippet", "tone", "allowed"),
        ("snippet", "runbook", "refused"),
        ("caller_context", "context[0]", "allowed"),
        ("task_input", "task_input", "allowed"),
    ]
    assert preview["unknown_tags"] == ["nope"]
    assert preview["denied_tools"] == [{"tool": "ghost", "reason": "not_registered"}]
    assert preview["redactions"] == {"github_token": 1}
    user = preview["messages"][1]["parts"]
    assert token not in str(preview)
    assert user[-1]["text"] == "Deploy with [REDACTED:github_token]"
    assert [(p["identifier"], p["withheld"]) for p in preview["messages"][0]["parts"]] == [
        (configuration.identifier, False),
        ("tone", False),
        ("runbook", True),  # refused for the send: never shown, even to a local receiver
    ]
    breakdown = preview["breakdown"]
    lines = ("system_prompt", "snippets", "skills", "caller_context", "tool_specs", "transcript", "tail_note")
    assert sum(breakdown[line] for line in lines) == breakdown["estimated"]
    assert GovernanceEvent.objects.count() == 0
    assert fake_provider.requests == []


def test_preview_would_send_when_permitted_and_fitting(fake_provider):
    configuration = fake_configuration(fake_provider, zone=TrustZone.LOCAL)
    request = SendRequest(task_input="Hi", input_data_class=DataClass.PUBLIC_CONTENT)
    preview = context_preview(configuration=configuration, request=request)
    assert preview.would_send is True
    assert preview.as_dict(receiver_zone=TrustZone.EXTERNAL_GLOBAL)["overflow"] is False
