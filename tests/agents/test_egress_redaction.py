"""Every text that leaves is redacted, names and labels included, and only what may leave is stored.

Canaries are drawn at test time (tests/canaries.py); a name holding one is the issue's reproduction:
before, it was sent verbatim as the context item's label, shown in the preview with ``redactions: {}``,
and written into the refusal's event, error and run row.
"""

from __future__ import annotations

import pytest

from agents.runtime.plan import send_plan
from agents.runtime.request import SendRequest
from agents.runtime.send import _over_budget
from agents.services import CallerContextItem
from context_assembly.estimator import Estimator
from context_assembly.fitting import fit
from governance.models import GovernanceEvent
from governance.services import EventContext, governance_event_record
from governance.vocabulary import DataClass, Decision, EventOutcome, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply
from tools.registry import REGISTRY, Tool, ToolEffect

pytestmark = pytest.mark.django_db

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261201)}
GITHUB = CANARIES["github_classic_pat"]
STRIPE = CANARIES["stripe_live_secret_key"]
AWS = CANARIES["aws_access_key_id"]


def leaked(text: str, *canaries) -> list[str]:
    return [c.kind for c in canaries for fragment in c.fragments() if fragment in text]


def body(configuration, **fields):
    return {"configuration": configuration.identifier, "input": "Summarise the launch.", **fields}


def test_a_run_stores_its_input_and_context_redacted(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake_provider)
    fake_provider.script(Reply(text="Done."))

    run = run_to_end(
        django_capture_on_commit_callbacks,
        configuration,
        input_text=f"Deploy with {GITHUB.value} today.",
        caller_context=(CallerContextItem(f"key {AWS.value}", STRIPE.context, DataClass.PUBLIC_CONTENT),),
    )

    assert run.status == "completed", (run.termination_reason, run.error_message)
    assert run.input_text == "Deploy with [REDACTED:github_token] today."
    [item] = run.caller_context
    assert item["name"] == "key [REDACTED:aws_access_key_id]"
    assert leaked(str(run.caller_context), STRIPE) == [] and "[REDACTED:" in item["text"]
    assert leaked(fake_provider.wire_text(), GITHUB, AWS, STRIPE) == []
    stored = GovernanceEvent.objects.filter(decision="secret_redacted", correlation_id=str(run.id))
    assert sorted(stored.values_list("reason", flat=True)) == [
        "1 x aws_access_key_id",
        "1 x github_token",
        "1 x stripe_key",
    ]
    assert set(stored.values_list("zone", "step")) == {("", None)}


def test_a_refused_run_names_the_item_by_position_in_its_error(
    fake_provider, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)
    run = run_to_end(
        django_capture_on_commit_callbacks,
        configuration,
        caller_context=(CallerContextItem(GITHUB.value, "x", DataClass.SOURCE_CODE),),
    )
    assert (run.status, run.termination_reason, run.error_code) == (
        "failed",
        "policy_denied",
        "context_refused",
    )
    assert run.error_message.startswith("caller_context 'context[0]' may not be sent")
    assert leaked(run.error_message + str(run.caller_context), GITHUB) == []
    event = GovernanceEvent.objects.get(decision="context_blocked")
    assert event.source_identifier == "context[0]"
    assert fake_provider.requests == []


def test_every_free_text_field_of_an_event_is_stored_redacted():
    context = EventContext(
        correlation_id="req-1",
        provider=f"p-{AWS.value}",
        model="m",
        configuration="c",
        api_client=f"client {GITHUB.value}",
    )
    governance_event_record(
        context=context,
        decision=Decision.TOOL_DENIED,
        outcome=EventOutcome.ENFORCED,
        reason=f"{STRIPE.value}: not_registered",
    )
    stored = str(list(GovernanceEvent.objects.values()))
    assert leaked(stored, AWS, GITHUB, STRIPE) == []
    event = GovernanceEvent.objects.get()
    assert event.api_client == "client [REDACTED:github_token]"
    assert event.reason == "[REDACTED:stripe_key]: not_registered"


@pytest.fixture
def leaky_tool():
    tool = Tool(
        name="deploy_notes",
        description=f"Reads the deploy notes (token {GITHUB.value}).",
        parameters={"type": "object", "properties": {}},
        group="content",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: "notes",
    )
    REGISTRY.register(tool)
    yield tool
    REGISTRY.unregister(tool.name)


@pytest.mark.late_redaction
def test_the_guard_pass_redacts_what_no_part_carried_and_records_a_content_free_event(
    fake_provider, leaky_tool, django_capture_on_commit_callbacks, _no_late_redaction
):
    # A tool spec is no part of the per-part pass: only the guard over the body sees its description.
    configuration = fake_configuration(fake_provider, allowed_tools=["deploy_notes"])
    fake_provider.script(Reply(text="Done."))

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert run.status == "completed", (run.termination_reason, run.error_message)
    [request] = fake_provider.requests
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    assert request.body["tools"][0]["function"]["description"] == (
        "Reads the deploy notes (token [REDACTED:github_token])."
    )
    event = GovernanceEvent.objects.get(decision="late_redaction")
    assert (event.outcome, event.correlation_id, event.step, event.zone) == (
        "enforced",
        str(run.id),
        0,
        "local",
    )
    assert event.reason == f"target 0 ({configuration.model.provider.identifier}/gpt-4o): 1 x github_token"
    assert leaked(str(list(GovernanceEvent.objects.values())), GITHUB) == []
    assert _no_late_redaction == [event.reason]


def test_a_late_redaction_over_the_budget_is_an_overflow_whose_lines_still_sum(fake_provider):
    configuration = fake_configuration(fake_provider)
    plan = send_plan(configuration=configuration, request=SendRequest("Hi", DataClass.PUBLIC_CONTENT))
    fitted = fit(plan.assembled, estimator=Estimator(plan.profile))
    over = _over_budget(fitted, fitted.breakdown.budget + 7)
    lines = ("system_prompt", "snippets", "skills", "caller_context", "tool_specs", "transcript", "tail_note")
    breakdown = over.breakdown.as_dict()
    assert (over.overflow, breakdown["remaining"]) == (True, -7)
    assert sum(breakdown[line] for line in lines) == breakdown["estimated"] == fitted.breakdown.budget + 7
    assert over.messages == fitted.messages
